"""Reaching Redis: connections, the cluster client, the Lua scripts and the embedded server.

``connection`` (the configured URL or the embedded server, opened with the
error boundary), ``cluster`` (Redis Cluster: ``FT.*`` routed by index name,
failovers waited out), ``lua`` (the one wrapper every script runs
through), ``scripts`` (every atomic state change), ``server`` (the embedded
``redis-server`` with the search module, a local cluster, persistence
profiles).
"""
