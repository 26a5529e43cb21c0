"""Redis Cluster: the client, where a namespace lives, and failovers waited out.

A ``redis+cluster://host:port[,host:port...]`` URL (or ``ConnectionSettings.cluster``)
makes ``connection.open_redis`` return a ``ClusterClient``: redis-py's asyncio cluster
client, typed as ``Redis`` for the rest of the package (it has the same command
methods), with two changes.

* FT.* commands are routed by their index name, like keys (``ClusterClient.routed``,
  for every command and pipeline). The search module of a cluster without a
  coordinator (RediSearch 2.x) indexes only its own shard's keys and expects FT.* on
  the shard of the index name (else ``MOVED``); every index name carries its
  namespace's hash tag, so a namespace's index sits beside its memories. redis-py
  would send FT.* to a random node. With ``read_from_replicas`` (redis-py's
  ``LoadBalancingStrategy.ROUND_ROBIN``), ``FT.SEARCH`` (as redis-py's other reads of a
  key) goes to the shard's master or one of its replicas in turn.
* A command or pipeline that meets a failover or a slot move (connection refused or
  reset, ``CLUSTERDOWN``, ``TRYAGAIN``, redirects beyond redis-py's own) is retried with
  backoff for up to ``cluster_retry_s``; then its error reaches the boundary
  (``RedisUnavailable``, retryable).
* The nodes a client discovers are kept, per list of seed addresses, for the process:
  when no seed answers (the one seed given was the master that failed), a client asks
  the nodes it or an earlier client of the same seeds saw. When none of those answers
  either, the error names the addresses tried and says that more seeds help.

Scripts need no help: their KEYS share one hash tag, so redis-py sends each ``EVALSHA`` to
its shard. Keyless commands that belong to a namespace (``WAITAOF`` after its write) take
``on_shard_of(redis, key)``. Cross-namespace keys (the namespace registry, tokens) are
single-key commands, and a pipeline spanning shards is split by redis-py, one round trip
per node.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from pydantic import SecretStr
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, RedisCluster
from redis.cluster import LoadBalancingStrategy, get_node_name
from redis.commands import READ_COMMANDS

from hindsight_redis.core.resp import RESP_PROTOCOL, as_text
from hindsight_redis.errors import (
    ConfigError,
    cluster_unreachable,
    no_cluster_node_answers,
    transient,
)

logger = logging.getLogger(__name__)

SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""URL schemes that select the cluster client, and the scheme of their nodes."""

ROUTE_KEY = "hindsight_route_key"
"""Keyword of ``execute_command`` on a ``ClusterClient``: send the command to this key's shard."""

# FT.* commands routed by their index name: the argument after the command (after
# the subcommand for FT.CURSOR READ|DEL), where COMMAND INFO puts their key too.
_BY_INDEX = frozenset(
    f"FT.{name}"
    for name in (
        "AGGREGATE",
        "ALIASADD",
        "ALIASDEL",
        "ALIASUPDATE",
        "ALTER",
        "CREATE",
        "CURSOR",
        "DROPINDEX",
        "EXPLAIN",
        "EXPLAINCLI",
        "INFO",
        "PROFILE",
        "SEARCH",
        "SPELLCHECK",
        "SYNDUMP",
        "SYNUPDATE",
        "TAGVALS",
    )
)
_FIRST_PAUSE_S = 0.05
_MAX_PAUSE_S = 1.0
_NO_REPLY = object()  # a pipelined command not sent yet, or to be sent again
MORE_SEEDS = "more seed addresses help: redis+cluster://host1:port1,host2:port2,..."

Address = tuple[str, int]
# Per list of seeds (sorted), every node that clients of this process found through them.
_DISCOVERED: dict[tuple[Address, ...], dict[str, Address]] = {}


def is_cluster_url(url: str) -> bool:
    """True for a ``redis+cluster://`` (or ``rediss+cluster://``) URL."""
    return url.partition("://")[0].lower() in SCHEMES


def cluster_url(url: str) -> str:
    """``url`` with the cluster scheme (``redis://h:p`` -> ``redis+cluster://h:p``)."""
    if is_cluster_url(url):
        return url
    scheme, sep, rest = url.partition("://")
    return f"{scheme}+cluster{sep}{rest}" if sep else f"redis+cluster://{url}"


def startup_nodes(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The ``(host, port)`` of each node a cluster URL names, and the connection options
    it carries (user, password, TLS)."""
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    nodes = []
    for address in (a.strip() for a in hosts.split(",")):
        if address.startswith("["):  # [IPv6]:port
            host, _, port = address[1:].partition("]")
            port = port.removeprefix(":")
        else:
            host, _, port = address.partition(":")
        if not port.isdigit() and port:
            raise ConfigError(f"bad node address {address!r} in the Redis Cluster URL")
        nodes.append((host or "localhost", int(port or 6379)))
    options: dict[str, Any] = {"ssl": SCHEMES.get(parts.scheme.lower()) == "rediss"}
    if user:
        options["username"] = unquote(user)
    if password:
        options["password"] = unquote(password)
    return nodes, options


class _Backoff:
    """Pauses between retries of transient errors, doubling, within ``budget_s``."""

    def __init__(self, budget_s: float) -> None:
        self._budget_s = budget_s
        self._deadline: float | None = None
        self._pause_s = _FIRST_PAUSE_S

    async def retry(self, error: BaseException) -> bool:
        """Pause and return True when ``error`` is transient and time remains."""
        if not transient(error):
            return False
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + self._budget_s
            logger.info("redis cluster: %s; retrying for up to %.0fs", error, self._budget_s)
        if now >= self._deadline:
            return False
        await asyncio.sleep(min(self._pause_s, self._deadline - now))
        self._pause_s = min(self._pause_s * 2, _MAX_PAUSE_S)
        return True


class ClusterClient(RedisCluster):
    """redis-py's cluster client with FT.* routed by index name and failovers waited out."""

    def __init__(self, *args: Any, retry_s: float = 15.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_s = retry_s
        seeds = self.nodes_manager.startup_nodes.values()
        self.seeds: tuple[Address, ...] = tuple(sorted((n.host, int(n.port)) for n in seeds))

    def known_nodes(self) -> list[Address]:
        """The seeds, then every node discovered through them in this process."""
        found = _DISCOVERED.get(self.seeds, {})
        return [*self.seeds, *(a for a in found.values() if a not in self.seeds)]

    async def initialize(
        self,
        additional_startup_nodes_info: list[Address] | None = None,
        last_failed_node_name: str | None = None,
    ) -> RedisCluster:
        """Read the topology (when due); when no startup node answers, ask the nodes known
        before (``known_nodes``); record the nodes found."""
        if not self._initialize:  # redis-py's flag: the topology is current
            return self
        try:
            await super().initialize(additional_startup_nodes_info, last_failed_node_name)
        except Exception as e:
            if not cluster_unreachable(e):
                raise
            tried = set(self.nodes_manager.startup_nodes)
            others = [a for a in self.known_nodes() if get_node_name(*a) not in tried]
            last: Exception | None = e
            if others:
                # As startup nodes (not redis-py's additional ones, whose connections
                # nothing closes): closed with them, replaced by the nodes found.
                for host, port in others:
                    node = ClusterNode(host, port, **self.nodes_manager.connection_kwargs)
                    self.nodes_manager.startup_nodes[node.name] = node
                try:
                    await super().initialize(None, last_failed_node_name)
                except Exception as again:
                    if not cluster_unreachable(again):
                        raise
                    last = again
                else:
                    last = None
            if last is not None:
                addresses = ", ".join(sorted(tried | {get_node_name(*a) for a in others}))
                raise no_cluster_node_answers(
                    f"none of {addresses} answers ({last.__cause__ or last}); {MORE_SEEDS}"
                ) from last
        found = _DISCOVERED.setdefault(self.seeds, {})
        for node in self.nodes_manager.nodes_cache.values():
            found[node.name] = (node.host, int(node.port))
        return self

    def routed(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The options of a command, with the node it goes to when redis-py would not find
        it: the shard of ``ROUTE_KEY`` or of an FT.* command's index name (any master for
        FT.CONFIG, whose settings are per node). Looked up now: after a failover, the new
        master."""
        options = dict(kwargs)
        key = options.pop(ROUTE_KEY, None)
        if "target_nodes" in options or not args:
            return options
        command = as_text(args[0]).upper()
        if key is None and command in _BY_INDEX and len(args) > 1:
            key = args[2] if command == "FT.CURSOR" and len(args) > 2 else args[1]
        if key is not None:
            reads = reads_replicas(self) and command in READ_COMMANDS
            node = self.nodes_manager.get_node_from_slot(
                self.keyslot(key), reads, self.load_balancing_strategy if reads else None
            )
            options["target_nodes"] = node
        elif command == "FT.CONFIG":
            options["target_nodes"] = self.get_default_node()
        return options

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Run a command; transient errors are retried for up to ``retry_s``."""
        backoff = _Backoff(self.retry_s)
        while True:
            try:
                await self.initialize()  # after a failover, the new topology
                return await super().execute_command(*args, **self.routed(args, kwargs))
            except Exception as e:
                if not await backoff.retry(e):
                    raise

    def pipeline(
        self, transaction: Any | None = None, shard_hint: Any | None = None
    ) -> ClusterPipeline:
        """A pipeline whose commands are queued here and sent, retried, on ``execute``."""
        if transaction or shard_hint:
            return super().pipeline(transaction, shard_hint)
        return ClusterClientPipeline(self)  # type: ignore[abstract]  # as redis-py does


class ClusterClientPipeline(ClusterPipeline):
    """A non-transactional cluster pipeline retried on a failover (within ``retry_s``).

    Commands are recorded and handed to redis-py at ``execute``, so each attempt routes
    them on the topology of that moment. A retry sends again only the commands without a
    reply: those that ran on the other shards keep theirs (a read of new stream entries,
    ``XREADGROUP ... >``, sent again would skip the entries the first one delivered), but
    when ``WAIT`` or ``WAITAOF`` is among them, every command goes again (they confirm the
    writes sent before them on their connection). Like redis-py's own retry, a command whose
    reply was lost or empty may run again: the package's writes are idempotent (event ids).
    """

    def __init__(self, client: ClusterClient) -> None:
        super().__init__(client, transaction=False)
        self._client = client
        self._queued: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __len__(self) -> int:
        return len(self._queued)

    @property
    def command_stack(self) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """The queued commands, ``(args, options)``, as on a server's pipeline."""
        return list(self._queued)

    def execute_command(self, *args: Any, **kwargs: Any) -> ClusterPipeline:
        """Queue a command."""
        self._queued.append((args, kwargs))
        return self

    async def execute(
        self, raise_on_error: bool = True, allow_redirections: bool = True
    ) -> list[Any]:
        """Send the queued commands (one round trip per node); retry on transient errors."""
        queued, self._queued = self._queued, []
        replies: list[Any] = [_NO_REPLY] * len(queued)
        backoff = _Backoff(self._client.retry_s)
        while True:
            todo = [i for i, reply in enumerate(replies) if reply is _NO_REPLY]
            thrown = await self._attempt(queued, todo, replies, allow_redirections)
            # A connection lost mid-reply comes back as a reply: sent again too.
            lost = [i for i, r in enumerate(replies) if isinstance(r, Exception) and transient(r)]
            error = thrown or (replies[lost[0]] if lost else None)
            if error is None or not await backoff.retry(error):
                break
            for i in lost:
                replies[i] = _NO_REPLY
            if any(_confirms(queued[i][0]) for i, r in enumerate(replies) if r is _NO_REPLY):
                # A confirmation sent again on another connection would confirm nothing:
                # the writes before it go again too (they are idempotent).
                replies = [_NO_REPLY] * len(queued)
        if thrown is not None:
            raise thrown
        if raise_on_error:
            for position, reply in enumerate(replies):
                if isinstance(reply, Exception):
                    reply.args = (f"Command # {position + 1} of pipeline caused error: {reply}",)
                    raise reply
        return replies

    async def _attempt(
        self,
        queued: list[tuple[tuple[Any, ...], dict[str, Any]]],
        todo: list[int],
        replies: list[Any],
        allow_redirections: bool,
    ) -> Exception | None:
        """Send the commands ``todo`` and put their replies in ``replies``; the error that
        stopped the attempt, if one did (the commands that got a reply keep it)."""
        sent: list[Any] = []
        try:
            await self._client.initialize()
            for i in todo:
                args, kwargs = queued[i]
                super().execute_command(*args, **self._client.routed(args, kwargs))
            # redis-py's commands of this attempt: on an error, those that ran hold a reply.
            sent = list(getattr(self._execution_strategy, "_command_queue", []))
            for i, reply in zip(
                todo, await super().execute(False, allow_redirections), strict=True
            ):
                replies[i] = reply
            return None
        except Exception as e:
            for i, command in zip(todo, sent, strict=False):
                if _answered(command.result):
                    replies[i] = command.result
            await super().reset()  # type: ignore[no-untyped-call]  # what this attempt queued
            return e


def _answered(result: Any) -> bool:
    """Whether a command of a failed attempt holds its reply. As redis-py's own retry, an
    empty one may be a command not sent yet; and redis-py 8 marks a command not answered
    with a bare ``object()`` (``_UNANSWERED``), which must go again, not back as a reply."""
    return bool(result) and not isinstance(result, Exception) and type(result) is not object


def _confirms(args: tuple[Any, ...]) -> bool:
    """Whether a command confirms the writes sent before it on its own connection."""
    return bool(args) and as_text(args[0]).upper() in ("WAIT", "WAITAOF")


def open_cluster(
    url: str,
    password: SecretStr | None = None,
    *,
    read_from_replicas: bool = False,
    retry_s: float = 15.0,
    timeout_s: float = 5.0,
) -> Redis:
    """A ``ClusterClient`` for a cluster URL (not connected yet), typed as ``Redis``.

    ``password`` is used unless the URL has one. ``read_from_replicas``: searches and
    other reads may be served by replicas (``READONLY``). ``timeout_s``: the longest
    wait for a reply (then the node counts as failed: the topology is read again).
    """
    nodes, options = startup_nodes(url)
    if "password" not in options and password is not None:
        options["password"] = password.get_secret_value()
    client = ClusterClient(
        startup_nodes=[ClusterNode(host, port) for host, port in nodes],
        retry_s=retry_s,
        # What redis-py's deprecated read_from_replicas=True did: the master and the
        # replicas of a shard in turn (READONLY connections).
        load_balancing_strategy=LoadBalancingStrategy.ROUND_ROBIN if read_from_replicas else None,
        protocol=RESP_PROTOCOL,
        decode_responses=False,
        health_check_interval=30,
        socket_timeout=timeout_s,
        socket_connect_timeout=min(timeout_s, 5.0),
        **options,
    )
    # The package takes one client type; RedisCluster has the command methods it uses.
    return cast(Redis, client)


# -- where things live ------------------------------------------------------------


def as_cluster(redis: object) -> RedisCluster | None:
    """``redis`` when it is a cluster client, else None."""
    return redis if isinstance(redis, RedisCluster) else None


def reads_replicas(cluster: RedisCluster) -> bool:
    """True when ``cluster`` may send reads to replicas (``read_from_replicas``)."""
    return cluster.load_balancing_strategy is not None


def is_cluster(redis: object) -> bool:
    """True when ``redis`` is a cluster client."""
    return isinstance(redis, RedisCluster)


def on_shard_of(redis: object, key: str) -> dict[str, Any]:
    """Options of ``execute_command`` that send a keyless command (``WAITAOF``) to the
    shard of ``key``, on the connection of that shard; none for one server."""
    return {ROUTE_KEY: key} if isinstance(redis, ClusterClient) else {}


def node_of(redis: object, key: str) -> str | None:
    """``host:port`` of the master holding ``key``; None for one server."""
    cluster = as_cluster(redis)
    if cluster is None:
        return None
    node = cluster.get_node_from_key(key)
    return None if node is None else str(node.name)


def replicas_of(redis: object, key: str) -> int:
    """How many replicas the shard of ``key`` has (as last seen); 0 for one server."""
    cluster = as_cluster(redis)
    if cluster is None:
        return 0
    return max(len(cluster.nodes_manager.slots_cache.get(cluster.keyslot(key)) or ()) - 1, 0)


async def replicated(redis: object, key: str, timeout_s: float) -> None:
    """With ``read_from_replicas``: wait (up to ``timeout_s``) until every replica of
    ``key``'s shard has ``key``, so that reads served by any of them see what its master
    held when ``key`` was written (replication keeps the order of writes)."""
    cluster = as_cluster(redis)
    if cluster is None or not reads_replicas(cluster):
        return
    deadline = time.monotonic() + timeout_s
    for node in (cluster.nodes_manager.slots_cache.get(cluster.keyslot(key)) or [])[1:]:
        while not await cluster.execute_command("EXISTS", key, target_nodes=node):
            if time.monotonic() >= deadline:
                return  # a replica lagging this far: its reads trail the master
            await asyncio.sleep(0.002)


async def refresh_topology(redis: object) -> None:
    """Read the cluster's slots and nodes again (after a replica was found missing)."""
    cluster = as_cluster(redis)
    if cluster is not None:
        await cluster.nodes_manager.initialize()


def by_slot(redis: object, keys: Iterable[str]) -> list[list[str]]:
    """``keys`` grouped by hash slot (commands of several keys need one slot); one group
    for one server."""
    cluster = as_cluster(redis)
    if cluster is None:
        return [list(keys)]
    groups: dict[int, list[str]] = {}
    for key in keys:
        groups.setdefault(cluster.keyslot(key), []).append(key)
    return list(groups.values())


async def list_indexes(redis: Redis) -> list[str]:
    """Every search index (``FT._LIST``), of every shard of a cluster."""
    cluster = as_cluster(redis)
    if cluster is None:
        names = await redis.execute_command("FT._LIST")  # type: ignore[no-untyped-call]
        return [as_text(n) for n in names]
    await cluster.initialize()
    primaries = cluster.get_primaries()
    reply = await cluster.execute_command("FT._LIST", target_nodes=primaries)
    per_node = reply.values() if isinstance(reply, dict) else [reply]
    return sorted({as_text(n) for names in per_node for n in names})
