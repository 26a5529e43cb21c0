"""``server start|stop|status --cluster``: a local Redis Cluster of embedded servers."""

from __future__ import annotations

import argparse

from hindsight_redis.settings import Settings

DEFAULT_PORT = 7000  # a cluster's nodes take consecutive ports (and each port + 10000)


def cmd_cluster_server(args: argparse.Namespace, settings: Settings) -> int:
    """Start, stop or show the local cluster of ``server_dir``."""
    from hindsight_redis.redis.connection import local_cluster

    port = settings.server_port if "server_port" in settings.model_fields_set else DEFAULT_PORT
    cluster = local_cluster(
        settings.connection,
        settings.server,
        masters=args.cluster or 3,
        replicas=args.replicas,
        port=port,
    )
    if args.action == "start":
        state = cluster.start()
        nodes = f"{state.masters} masters, {state.replicas} replica(s) each"
        ports = f"ports {state.ports[0]}-{state.ports[-1]}"
        print(f"local cluster running: {nodes}, {ports} (profile {state.profile})")
        print(f"url: {state.url}")
        print(f"data dir: {cluster.data_dir} (commands with no --redis-url use this cluster)")
    elif args.action == "stop":
        print("stopped" if cluster.stop() else "not running")
    else:
        layout = cluster.state()
        if layout is None:
            print(f"not running (data dir {cluster.data_dir})")
            return 3
        print(f"running: {layout.url} (profile {layout.profile})")
        for port, role in cluster.roles().items():
            print(f"  {port}: {role}")
    return 0
