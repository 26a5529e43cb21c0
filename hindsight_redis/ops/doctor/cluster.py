"""``doctor`` on a Redis Cluster: its state, shards, replicas, every node, every namespace.

Each node is checked on its own (version, search module, persistence against the
profile, search GC, network exposure, disk writes): every shard indexes its own
namespaces, so a node without the search module or with another fsync policy is a
problem even when the others are fine. Namespaces are listed with the shard that holds
them (the master of their hash tag's slot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text, reply_map
from hindsight_redis.errors import HindsightError, redis_errors
from hindsight_redis.ops.doctor.checks import (
    DoctorReport,
    check_disk_writes,
    check_exposure,
    check_index,
    check_search_gc,
)
from hindsight_redis.ops.doctor.data_format import check_data_format
from hindsight_redis.ops.doctor.memory import check_memory
from hindsight_redis.redis.cluster import as_cluster, cluster_url, is_cluster_url
from hindsight_redis.redis.connection import (
    local_cluster,
    open_redis,
    plain_password,
    profile_conflict,
)
from hindsight_redis.redis.server.profiles import (
    PersistenceProfile,
    get_profile,
    profile_mismatches,
)
from hindsight_redis.settings import ConnectionSettings, ServerSettings

_SHOWN_NAMESPACES = 20


@dataclass(frozen=True, slots=True)
class _Node:
    """What one node said about itself."""

    address: str
    role: str
    version: str
    has_search: bool
    persistence: dict[str, str]
    notes: DoctorReport  # its GC, exposure and disk checks


async def diagnose_cluster(
    connection: ConnectionSettings,
    keys: Keys,
    url: str,
    profile: PersistenceProfile,
    report: DoctorReport,
    *,
    check_persistence: bool = True,
) -> None:
    """Add the cluster's facts and problems to ``report`` (and where ``keys.namespace``
    and the registry's namespaces live, the health of its index)."""
    try:
        client = await open_redis(url, connection.redis_password, connection=connection)
    except HindsightError as e:
        report.problems.append(str(e))
        return
    try:
        with redis_errors("check the cluster"):
            await _check_cluster(client, connection, keys, profile, report, check_persistence)
    except HindsightError as e:
        report.problems.append(str(e))
    finally:
        await client.aclose()


async def _check_cluster(
    client: aioredis.Redis,
    connection: ConnectionSettings,
    keys: Keys,
    profile: PersistenceProfile,
    report: DoctorReport,
    check_persistence: bool,
) -> None:
    cluster = as_cluster(client)
    assert cluster is not None
    nodes = [await _node(n.host, int(n.port), connection) for n in cluster.get_nodes()]
    first = _plain(cluster.get_nodes()[0].host, int(cluster.get_nodes()[0].port), connection)
    try:
        info = _fields(as_text(await first.execute_command("CLUSTER", "INFO")))  # type: ignore[no-untyped-call]
        shards = await first.execute_command("CLUSTER", "SHARDS")  # type: ignore[no-untyped-call]
    finally:
        await first.aclose()
    state = info.get("cluster_state", "?")
    report.facts["cluster"] = (
        f"{state}, {info.get('cluster_size', '?')} shards, "
        f"{info.get('cluster_slots_assigned', '?')}/16384 slots assigned"
    )
    if state != "ok":
        report.problems.append(
            f"the cluster state is {state!r}: some slots have no reachable master "
            f"({info.get('cluster_slots_fail', '?')} failed); writes to their namespaces fail"
        )
    report.facts["shards"] = _describe_shards(shards, report)
    _check_nodes(nodes, profile, report, check_persistence)
    await _place_namespaces(client, keys, report)
    await check_index(client, keys, report)
    await check_data_format(client, keys, report)


def _plain(host: str, port: int, connection: ConnectionSettings) -> aioredis.Redis:
    """A client of one node alone."""
    password = plain_password(connection.redis_password)
    return aioredis.Redis(host=host, port=port, password=password, socket_timeout=5)


async def _node(host: str, port: int, connection: ConnectionSettings) -> _Node:
    node = _plain(host, port, connection)
    try:
        with redis_errors(f"check node {host}:{port}"):
            info = await node.info()
            modules = {as_text(m[b"name"]) for m in await node.module_list()}
            config: dict[Any, Any] = {}
            for name in ("appendonly", "appendfsync", "save"):
                config.update(await node.config_get(name))
            notes = DoctorReport()
            await check_search_gc(node, notes)
            await check_exposure(node, connection, notes)
            await check_disk_writes(node, notes, f"the log of {host}:{port}")
            await check_memory(node, notes)
    finally:
        await node.aclose()
    return _Node(
        address=f"{host}:{port}",
        role="replica" if info.get("role") == "slave" else "master",
        version=str(info.get("redis_version", "?")),
        has_search=bool({"search", "searchlight"} & modules),
        persistence={as_text(k): as_text(v) for k, v in config.items()},
        notes=notes,
    )


def _describe_shards(shards: Any, report: DoctorReport) -> str:
    """``master (slots) + replicas`` per shard; a shard whose replica is down is a problem."""
    described = []
    for raw in sorted(shards, key=lambda s: list(reply_map(s).get("slots") or [0])[:1]):
        shard = reply_map(raw)
        slots = [int(s) for s in shard.get("slots") or []]
        ranges = ",".join(f"{a}-{b}" for a, b in zip(slots[::2], slots[1::2], strict=True))
        members = [reply_map(n) for n in shard.get("nodes") or []]
        master = [n for n in members if as_text(n.get("role")) == "master"]
        replicas = [n for n in members if as_text(n.get("role")) != "master"]
        down = [n for n in members if as_text(n.get("health")) != "online"]
        name = _address(master[0]) if master else "no master"
        text = f"{name} (slots {ranges or 'none'})"
        text += f" + {len(replicas)} replica(s)" if replicas else ", no replica"
        for node in down:
            report.problems.append(
                f"node {_address(node)} of shard {name} is {as_text(node.get('health'))}"
            )
        if ranges or replicas:
            described.append(text)
    return "; ".join(described)


def _address(node: dict[str, Any]) -> str:
    return f"{as_text(node.get('endpoint') or node.get('ip'))}:{node.get('port')}"


def _check_nodes(
    nodes: Sequence[_Node], profile: PersistenceProfile, report: DoctorReport, persistence: bool
) -> None:
    """Every node: the search module, the profile, and its own GC/exposure/disk checks."""
    versions = sorted({n.version for n in nodes})
    masters = sum(n.role == "master" for n in nodes)
    searching = sum(n.has_search for n in nodes)
    report.facts["nodes"] = (
        f"{len(nodes)} ({masters} masters, {len(nodes) - masters} replicas), redis "
        f"{', '.join(versions)}, search module on "
        + ("every node" if searching == len(nodes) else f"{searching} of them")
    )
    configs = {" ".join(f"{k}={v!r}" for k, v in sorted(n.persistence.items())) for n in nodes}
    report.facts["persistence"] = " | ".join(sorted(configs)) + (
        " (every node)" if len(configs) == 1 else " (nodes differ)"
    )
    found: dict[str, list[str]] = {}  # problem -> the nodes that have it
    for node in nodes:
        problems = list(node.notes.problems)
        if not node.has_search:
            problems.append(
                "no search module: the namespaces of its shard cannot be indexed (load "
                "redisearch on every node)"
            )
        if persistence:
            problems += [f"persistence: {p}" for p in profile_mismatches(profile, node.persistence)]
        for problem in problems:
            found.setdefault(problem, []).append(node.address)
    for problem, where in found.items():
        on = "every node" if len(where) == len(nodes) else f"node {', '.join(where)}"
        report.problems.append(f"{on}: {problem}")


async def _place_namespaces(client: aioredis.Redis, keys: Keys, report: DoctorReport) -> None:
    """Where ``keys.namespace`` and each namespace of the registry live: the master of
    its hash tag's slot."""
    from hindsight_redis.pipeline.namespaces import registered

    cluster = as_cluster(client)
    assert cluster is not None
    names = sorted(set(await registered(client, keys.prefix)) | {keys.namespace})
    placed = []
    for name in names[:_SHOWN_NAMESPACES]:
        stream = Keys(keys.prefix, name).stream
        node = cluster.get_node_from_key(stream)
        placed.append(f"{name} -> {node.name if node else '?'} (slot {cluster.keyslot(stream)})")
    more = len(names) - _SHOWN_NAMESPACES
    report.facts["namespaces"] = ", ".join(placed) + (f" and {more} more" if more > 0 else "")


def _fields(text: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text.split() if ":" in line)


async def diagnose_if_cluster(
    connection: ConnectionSettings, server: ServerSettings, keys: Keys, report: DoctorReport
) -> bool:
    """``diagnose`` of a cluster (a cluster URL, ``cluster = true``, or the local cluster of
    ``server_dir`` running while no URL is set); False, doing nothing, for one server."""
    profile, check = get_profile(connection.profile), True
    if connection.redis_url is not None:
        if not (connection.cluster or is_cluster_url(connection.redis_url)):
            return False
        url = cluster_url(connection.redis_url)
        report.facts["server"] = "external Redis Cluster (HINDSIGHT_REDIS_URL)"
    else:
        local = local_cluster(connection, server)
        running = local.state()
        if running is None:
            return False
        url = running.url
        report.facts["server"] = (
            f"local cluster, {len(running.ports)} nodes on ports {running.ports[0]}-"
            f"{running.ports[-1]}, data in {local.data_dir}"
        )
        conflict = profile_conflict(connection, running.profile)
        if conflict is None:
            profile = get_profile(running.profile)
        else:
            report.problems.append(conflict)
            check = False
    report.facts["profile"] = f"{profile.name} ({profile.description})"
    await diagnose_cluster(connection, keys, url, profile, report, check_persistence=check)
    return True
