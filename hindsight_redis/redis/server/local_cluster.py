"""A local Redis Cluster of embedded servers, for tests and trials.

``LocalCluster`` runs ``masters`` redis-server processes in cluster mode and
``replicas`` replicas of each, on consecutive ports from ``port`` (masters first; each
node's cluster bus on its port + 10000), every node in its own directory under
``data_dir`` with the search module and the persistence profile (``EmbeddedServer``).
``start`` assigns the 16,384 hash slots evenly to the masters, introduces the nodes
(``CLUSTER MEET``), attaches each master's replicas (``CLUSTER REPLICATE``) and waits
until every node reports the cluster ``ok`` and every replica is in sync.
``cluster.json`` records the layout, so every process finds the cluster; ``stop``
shuts its nodes down, and a later ``start`` brings the same nodes back (their
``nodes.conf``), with their data when the profile persists.

Failover is quick on a local cluster: a node counts as failed after
``NODE_TIMEOUT_MS``, a replica may always take over
(``cluster-replica-validity-factor 0``), and the other shards keep serving while one
fails over (``cluster-require-full-coverage no``).
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import redis
from pydantic import SecretStr
from redis.backoff import NoBackoff
from redis.retry import Retry

from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import HindsightError, PortInUse, ServerError, redis_errors
from hindsight_redis.redis.server.launcher import EmbeddedServer, ServerState, port_taken
from hindsight_redis.redis.server.profiles import PersistenceProfile

_NO_RETRY = Retry(NoBackoff(), 0)
SLOTS = 16_384
NODE_TIMEOUT_MS = 2_000
_STATE_FILE = "cluster.json"
_BUS_OFFSET = 10_000  # Redis puts a node's cluster bus on its port + 10000
_NODE_CONFIG = {
    "cluster-enabled": "yes",
    "cluster-config-file": "nodes.conf",
    "cluster-node-timeout": str(NODE_TIMEOUT_MS),
    "cluster-require-full-coverage": "no",
    "cluster-replica-validity-factor": "0",
    "cluster-allow-replica-migration": "no",
    "repl-diskless-sync-delay": "0",  # a new replica syncs at once, not after 5 s
    # CLUSTER SLOTS lists a replica once its offset moved, which pings do: every second.
    "repl-ping-replica-period": "1",
}


@dataclass(frozen=True, slots=True)
class ClusterState:
    """The layout of a local cluster, as ``cluster.json`` records it."""

    host: str
    ports: tuple[int, ...]
    """Every node's port: the masters first, then each master's replicas in turn."""
    masters: int
    replicas: int
    """Replicas per master."""
    profile: str

    @property
    def url(self) -> str:
        """The ``redis+cluster://`` URL naming every node (any one of them finds the rest)."""
        return "redis+cluster://" + ",".join(f"{self.host}:{port}" for port in self.ports)

    @property
    def master_ports(self) -> tuple[int, ...]:
        """The ports of the nodes started as masters."""
        return self.ports[: self.masters]

    def replica_ports(self, master: int) -> tuple[int, ...]:
        """The ports of the replicas started for the ``master``-th master."""
        start = self.masters + master * self.replicas
        return self.ports[start : start + self.replicas]


class LocalCluster:
    """Start, find, check and stop a local cluster in ``data_dir``."""

    def __init__(
        self,
        data_dir: Path,
        profile: PersistenceProfile,
        *,
        masters: int = 3,
        replicas: int = 0,
        port: int = 7000,
        bind: str = "127.0.0.1",
        start_timeout_s: float = 15.0,
        password: SecretStr | None = None,
    ) -> None:
        if masters < 1 or replicas < 0:
            raise ServerError("a cluster needs at least one master and no negative replicas")
        self.data_dir = data_dir.expanduser()
        self.profile = profile
        self.masters = masters
        self.replicas = replicas
        self.port = port
        self.bind = bind
        self.start_timeout_s = start_timeout_s
        self.password = password

    @property
    def state_file(self) -> Path:
        """``cluster.json``: the layout of the cluster started here."""
        return self.data_dir / _STATE_FILE

    def node(self, port: int) -> EmbeddedServer:
        """The embedded server of the node on ``port`` (its directory is named by the port)."""
        return EmbeddedServer(
            self.data_dir / str(port),
            self.profile,
            port=port,
            bind=self.bind,
            start_timeout_s=self.start_timeout_s,
            password=self.password,
            extra_config=_NODE_CONFIG,
        )

    def layout(self) -> ClusterState | None:
        """The recorded layout, running or not; None when no cluster was started here."""
        try:
            data = json.loads(self.state_file.read_text())
            return ClusterState(**{**data, "ports": tuple(data["ports"])})
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def state(self) -> ClusterState | None:
        """The layout when some node of it answers, else None."""
        layout = self.layout()
        if layout is None or not any(self.node(p).state() for p in layout.ports):
            return None
        return layout

    def nodes(self) -> dict[int, ServerState | None]:
        """Each node's port and its state (None: not running)."""
        layout = self.layout()
        return {} if layout is None else {p: self.node(p).state() for p in layout.ports}

    def roles(self) -> dict[int, str]:
        """Each node's port and what it is now: ``master``, ``replica`` or ``down``."""
        layout = self.layout()
        roles: dict[int, str] = {}
        if layout is None:
            return roles
        with self._clients(layout) as clients:
            for port, client in clients.items():
                try:
                    with redis_errors("read the node's role"):
                        role = client.info("replication")["role"]
                    roles[port] = "replica" if role == "slave" else "master"
                except HindsightError:
                    roles[port] = "down"
        return roles

    def master_of(self, port: int) -> int | None:
        """The port of the master the node on ``port`` replicates, as that node sees it
        (``CLUSTER NODES``), once its replication link is up; None for a master, a node
        that is down, or a replica still syncing."""
        layout = self.layout()
        if layout is None:
            return None
        with self._clients(layout) as clients:
            try:
                with redis_errors("read the node's master"):
                    if clients[port].info("replication").get("master_link_status") != "up":
                        return None
                    text = as_text(_cluster(clients[port], "NODES"))
            except HindsightError:
                return None
        nodes = [line.split() for line in text.splitlines()]
        me = next(n for n in nodes if "myself" in n[2].split(","))
        master = next((n for n in nodes if n[0] == me[3]), None)
        if master is None:
            return None
        return int(master[1].split("@")[0].rsplit(":", 1)[1])  # host:port@bus

    def start(self) -> ClusterState:
        """Start every node and form the cluster (or rejoin the one formed here before)."""
        if self.state() is not None:
            raise ServerError(f"a cluster is already running here ({self.data_dir})")
        layout = self.layout()
        if layout is None:
            layout = ClusterState(
                self.bind, self._ports(), self.masters, self.replicas, self.profile.name
            )
        elif (layout.masters, layout.replicas) != (self.masters, self.replicas):
            raise ServerError(
                f"a cluster of {layout.masters} masters with {layout.replicas} replica(s) "
                f"each was started in {self.data_dir} before: start it again with "
                f"--cluster {layout.masters} --replicas {layout.replicas}, or choose "
                "another --server-dir"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        started = []
        try:
            for port in layout.ports:
                started.append(self.node(port).start())
            with self._clients(layout) as clients:
                self._form(layout, clients)
        except BaseException:
            for state in started:
                self.node(state.port).stop()
            raise
        layout = ClusterState(**{**asdict(layout), "profile": self.profile.name})
        self.state_file.write_text(json.dumps(asdict(layout)))
        return layout

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Shut every node down; False when none ran."""
        layout = self.layout()
        if layout is None:
            return False
        # In parallel: a node with the search module takes a second or two to exit.
        with ThreadPoolExecutor(len(layout.ports)) as pool:
            stopped = list(pool.map(lambda p: self.node(p).stop(timeout_s), layout.ports))
        return any(stopped)

    # -- forming the cluster ----------------------------------------------------

    def _ports(self) -> tuple[int, ...]:
        """``masters * (1 + replicas)`` consecutive ports, free with their bus ports."""
        count = self.masters * (1 + self.replicas)
        if self.port:
            ports = tuple(range(self.port, self.port + count))
            taken = [p for p in ports if self._taken(p)]
            if taken:
                raise PortInUse(
                    f"port {taken[0]} (or its cluster bus port {taken[0] + _BUS_OFFSET}) on "
                    f"{self.bind} is taken: the cluster needs ports {ports[0]}-{ports[-1]}; "
                    "choose another base with --port (0 picks free ones)"
                )
            return ports
        for _ in range(200):
            base = random.randrange(20_000, 45_000)
            ports = tuple(range(base, base + count))
            if not any(self._taken(p) for p in ports):
                return ports
        raise PortInUse(f"found no {count} consecutive free ports on {self.bind}")

    def _taken(self, port: int) -> bool:
        return port_taken(self.bind, port) or port_taken(self.bind, port + _BUS_OFFSET)

    @contextlib.contextmanager
    def _clients(self, layout: ClusterState) -> Iterator[dict[int, redis.Redis]]:
        password = None if self.password is None else self.password.get_secret_value()
        clients = {  # no retries: a node that is down (killed, not started) says so at once
            p: redis.Redis(
                host=layout.host, port=p, password=password, socket_timeout=5.0, retry=_NO_RETRY
            )
            for p in layout.ports
        }
        try:
            yield clients
        finally:
            for client in clients.values():
                client.close()

    def _form(self, layout: ClusterState, clients: dict[int, redis.Redis]) -> None:
        masters = layout.master_ports
        first = clients[masters[0]]
        with redis_errors("form the local cluster"):
            if _info(first)["cluster_known_nodes"] == "1":  # fresh nodes, not a restart
                for i, port in enumerate(masters):
                    # Distinct epochs up front, as redis-cli does: no collisions to resolve.
                    _cluster(clients[port], "SET-CONFIG-EPOCH", i + 1)
                    low, high = i * SLOTS // len(masters), (i + 1) * SLOTS // len(masters) - 1
                    _cluster(clients[port], "ADDSLOTSRANGE", low, high)
                for port in layout.ports[1:]:
                    _cluster(clients[port], "MEET", layout.host, masters[0])
                self._wait("every node to know the others", lambda: _all_known(clients))
                for i, master in enumerate(masters):
                    master_id = as_text(_cluster(clients[master], "MYID"))
                    for port in layout.replica_ports(i):
                        _cluster(clients[port], "REPLICATE", master_id)
            self._wait("the cluster to be ok", lambda: _settled(layout, clients))

    def _wait(self, what: str, done: object) -> None:
        deadline = time.monotonic() + 4 * self.start_timeout_s
        while True:
            try:
                if done():  # type: ignore[operator]
                    return
            except HindsightError:
                pass  # a node still starting: ask again
            if time.monotonic() > deadline:
                raise ServerError(f"timed out waiting for {what} (logs in {self.data_dir}/*/)")
            time.sleep(0.1)


def _cluster(client: redis.Redis, *args: object) -> Any:
    """The reply of ``CLUSTER <args>``."""
    return client.execute_command("CLUSTER", *args)  # type: ignore[no-untyped-call]


def _info(client: redis.Redis) -> dict[str, str]:
    """``CLUSTER INFO`` as a mapping."""
    with redis_errors("read the cluster state"):
        text = as_text(_cluster(client, "INFO"))
    return dict(line.split(":", 1) for line in text.split() if ":" in line)


def _all_known(clients: dict[int, redis.Redis]) -> bool:
    return all(_info(c)["cluster_known_nodes"] == str(len(clients)) for c in clients.values())


def _settled(layout: ClusterState, clients: dict[int, redis.Redis]) -> bool:
    """Every node sees the cluster ok, and every shard with its replicas in sync."""
    if not all(_info(c)["cluster_state"] == "ok" for c in clients.values()):
        return False
    with redis_errors("read the cluster state"):
        for client in clients.values():
            shards = _cluster(client, "SLOTS")
            if sum(len(shard) - 2 for shard in shards) < len(layout.ports):
                return False  # some node does not list every replica yet
            role = client.info("replication")
            if role["role"] == "slave" and role.get("master_link_status") != "up":
                return False
    return True
