"""What operators read: stats, dead letters, metrics, the health of a deployment.

``admin`` (stats, dead letters, conflicts, recent memories and drops),
``stats`` (counters and stream state of many namespaces at once),
``metrics`` (Prometheus), ``doctor`` (health checks of a server or a
cluster), ``backup`` and ``restore`` (the whole server, snapshot and back),
``render`` (plain text for people), ``layout`` (the width it is drawn at,
tables, the words that differ).
"""
