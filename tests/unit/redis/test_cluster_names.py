"""Cluster-safe names, cluster URLs and the cluster errors at the boundary (no Redis)."""

from __future__ import annotations

import pytest
from redis import exceptions as rx

from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import (
    ConfigError,
    RedisCommandError,
    RedisUnavailable,
    map_redis_error,
    transient,
)
from hindsight_redis.redis.cluster import cluster_url, is_cluster_url, startup_nodes
from hindsight_redis.redis.connection import resolve
from hindsight_redis.settings import Settings


def _tag(name: str) -> str:
    """The hash tag of a key: what a cluster hashes to pick its slot."""
    return name[name.index("{") + 1 : name.index("}")]


def test_every_name_of_a_namespace_carries_its_hash_tag() -> None:
    keys = Keys("hindsight", "team-a")
    names = [
        keys.stream,
        keys.stats,
        keys.dead_letters,
        keys.doc("m1"),
        keys.outcome("e1"),
        keys.index_meta,
        keys.index_alias,
        keys.index_name(1),
        keys.index_name(12),
    ]
    assert {_tag(n) for n in names} == {"team-a"}
    assert keys.index_alias == "hindsight:{team-a}:idx"
    assert keys.index_name(3) == "hindsight:{team-a}:idx:g3"


def test_indexes_of_a_namespace_are_told_apart_from_its_neighbours() -> None:
    keys = Keys("p", "a")
    assert keys.legacy_index_alias == "p-a-idx"  # the name before 0.2 (no hash tag)
    assert keys.is_index("p:{a}:idx:g1") and keys.is_index("p-a-idx-g7")
    assert not keys.is_index("p:{ab}:idx:g1") and not keys.is_index("p-ab-idx-g1")
    assert not keys.is_index("p:{a}:idxfoo")


def test_cluster_urls_name_their_nodes_and_credentials() -> None:
    assert is_cluster_url("redis+cluster://h:7000") and is_cluster_url("REDISS+CLUSTER://h:1")
    assert not is_cluster_url("redis://h:7000")
    assert cluster_url("redis://h:7000/0") == "redis+cluster://h:7000/0"
    assert cluster_url("rediss://h:7000") == "rediss+cluster://h:7000"
    nodes, options = startup_nodes("redis+cluster://u:p%40ss@10.0.0.1:7000,[::1]:7001,h/0")
    assert nodes == [("10.0.0.1", 7000), ("::1", 7001), ("h", 6379)]
    assert options == {"ssl": False, "username": "u", "password": "p@ss"}
    assert startup_nodes("rediss+cluster://h:1")[1] == {"ssl": True}
    with pytest.raises(ConfigError, match="bad node address"):
        startup_nodes("redis+cluster://h:port")


def test_cluster_true_turns_a_plain_url_into_a_cluster_target() -> None:
    configured = Settings(redis_url="redis://10.0.0.1:7000", cluster=True)
    target = resolve(configured.connection, configured.server)
    assert target.cluster and target.url == "redis+cluster://10.0.0.1:7000"
    single = Settings(redis_url="redis://10.0.0.1:6379")
    assert not resolve(single.connection, single.server).cluster


@pytest.mark.parametrize(
    "error",
    [
        rx.ClusterDownError("CLUSTERDOWN The cluster is down"),
        rx.TryAgainError("TRYAGAIN Multiple keys request during rehashing of slot"),
        rx.MovedError("1234 127.0.0.1:7001"),
        rx.SlotNotCoveredError('Slot "12" is not covered by the cluster.'),
        rx.RedisClusterException("Redis Cluster cannot be connected. Please provide ..."),
        rx.ConnectionError("Connection refused"),
    ],
)
def test_failovers_and_slot_moves_are_transient_and_retryable(error: Exception) -> None:
    assert transient(error)
    mapped = map_redis_error(error, "search")
    assert isinstance(mapped, RedisUnavailable) and mapped.retryable


def test_a_moved_reply_says_a_cluster_needs_the_cluster_scheme() -> None:
    mapped = map_redis_error(rx.MovedError("1234 127.0.0.1:7001"), "write")
    assert mapped is not None and "redis+cluster://" in str(mapped)


@pytest.mark.parametrize(
    "error",
    [
        rx.RedisClusterException("Keys in request don't hash to the same slot"),
        rx.ClusterCrossSlotError("CROSSSLOT Keys in request don't hash to the same slot"),
        rx.AuthenticationError("invalid password"),
        rx.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
    ],
)
def test_bugs_and_refusals_are_not_retried(error: Exception) -> None:
    assert not transient(error)
    assert not getattr(map_redis_error(error, "write"), "retryable", False)


def test_a_command_the_cluster_client_cannot_route_is_a_command_error() -> None:
    error = rx.RedisClusterException("Keys in request don't hash to the same slot")
    mapped = map_redis_error(error, "read the streams")
    assert isinstance(mapped, RedisCommandError) and "same slot" in mapped.reply


def test_the_cluster_compose_file_wires_six_nodes_to_workers_and_mcp() -> None:
    from pathlib import Path

    import yaml

    from hindsight_redis.cli.app import build_parser

    compose = Path(__file__).resolve().parents[3] / "compose" / "docker-compose.cluster.yml"
    spec = yaml.safe_load(compose.read_text())
    assert "name" not in spec  # docker-compose 1.29 rejects the top-level name: key
    services = spec["services"]
    nodes = sorted(n for n in services if n.startswith("redis-"))
    assert nodes == [f"redis-{n}" for n in range(1, 7)]
    for name in nodes:
        node = services[name]
        command = " ".join(node["command"])
        assert node["hostname"] == name and "--cluster-enabled yes" in command
        assert "--appendfsync always" in command and "FORK_GC_RUN_INTERVAL 2" in command
    assert "--cluster-replicas 1" in " ".join(services["cluster-init"]["command"])
    parser = build_parser()
    for name in ("worker", "mcp"):
        service = services[name]
        url = service["environment"]["HINDSIGHT_REDIS_URL"]
        assert is_cluster_url(url)
        assert [host for host, _ in startup_nodes(url)[0]] == nodes
        assert (
            service["depends_on"]["cluster-init"]["condition"] == "service_completed_successfully"
        )
        assert parser.parse_args(service["command"]).command == service["command"][0]
    assert parser.parse_args(services["worker"]["command"]).all_namespaces
    assert parser.parse_args(services["mcp"]["command"]).workers == 0


async def test_a_cluster_no_seed_of_which_answers_says_more_seeds_help() -> None:
    import socket

    from hindsight_redis.redis.connection import open_redis

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(cluster_retry_s=0.2)
    with pytest.raises(RedisUnavailable) as caught:
        await open_redis(f"redis+cluster://127.0.0.1:{port}", connection=settings.connection)
    said = str(caught.value)
    assert f"none of 127.0.0.1:{port} answers" in said
    assert "more seed addresses help: redis+cluster://host1:port1,host2:port2" in said
