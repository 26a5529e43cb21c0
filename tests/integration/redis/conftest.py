"""Fixtures of the cluster tests: one local Redis Cluster per session (3 masters, 1 replica
each, ``durable``), settings with a key prefix per test (removed from every node after),
the package's cluster client on it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis as redis_sync
from redis.asyncio import Redis

from hindsight_redis import Settings
from hindsight_redis.redis.cluster import is_cluster
from hindsight_redis.redis.connection import open_redis
from hindsight_redis.redis.server import get_profile
from hindsight_redis.redis.server.local_cluster import ClusterState, LocalCluster
from tests.integration.helpers import cluster_node


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """``server start --cluster 3 --replicas 1`` once per session (durable on every node)."""
    cluster = LocalCluster(
        tmp_path_factory.mktemp("cluster"), get_profile("durable"), replicas=1, port=0
    )
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def layout(local_cluster: LocalCluster) -> ClusterState:
    state = local_cluster.layout()
    assert state is not None
    return state


@pytest.fixture
def csettings(layout: ClusterState, tmp_path: Path) -> Iterator[Settings]:
    """Settings on the cluster with a prefix of the test's own, removed from every node after."""
    prefix = f"c{uuid.uuid4().hex[:8]}"
    yield Settings(
        redis_url=layout.url,
        key_prefix=prefix,
        namespace="a",
        profile="durable",
        embedder="hash",
        contextual_embedder="none",
        filters_enabled=False,
        dedup_threshold=1.0,
        server_dir=tmp_path / "unused",
        worker_block_ms=50,
        claim_idle_ms=1000,
        cluster_retry_s=30,
        namespace_refresh_s=0.2,
    )
    for port in layout.ports:
        node = cluster_node(layout, port)
        try:
            if node.info("replication")["role"] != "master":
                continue
            for name in node.execute_command("FT._LIST"):
                if name.decode().startswith((f"{prefix}:", f"{prefix}-")):
                    node.execute_command("FT.DROPINDEX", name)
            pipe = node.pipeline(transaction=False)  # one key per DEL: keys of many slots
            for key in node.scan_iter(match=f"{prefix}:*", count=1000):
                pipe.delete(key)
            pipe.execute()
        except redis_sync.ConnectionError:
            pass  # the master the failover test killed
        finally:
            node.close()


@pytest.fixture
async def cluster_redis(csettings: Settings) -> AsyncIterator[Redis]:
    """The package's cluster client on the session's cluster."""
    client = await open_redis(str(csettings.redis_url), connection=csettings.connection)
    assert is_cluster(client)
    yield client
    await client.aclose()
