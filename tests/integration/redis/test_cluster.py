"""On a real local Redis Cluster (3 masters, 1 replica each, ``durable``): namespaces spread
over shards, each with its keys and index on its own shard; the whole client, worker and
CLI surface per namespace; an index named before 0.2 adopted; a master killed mid-writes.

One cluster per session (``server start --cluster 3 --replicas 1``, in ``conftest.py``);
each test has its own key prefix, and its keys and indexes are removed from every node
afterwards. The failover test kills a master, so it comes last.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.cli import main
from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import RedisUnavailable, WriteTimeout
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.providers.embedders import HashEmbedder
from hindsight_redis.redis.cluster import list_indexes, node_of, refresh_topology, replicas_of
from hindsight_redis.redis.connection import open_redis
from hindsight_redis.redis.server.local_cluster import ClusterState, LocalCluster
from tests.integration.helpers import cluster_node, wait_for

pytestmark = pytest.mark.cluster
NAMESPACES = ("a", "b", "c", "d", "e", "f")  # their hash slots fall on all three shards


def _on(settings: Settings, namespace: str) -> Settings:
    return settings.model_copy(update={"namespace": namespace})


def _keys_on(layout: ClusterState, pattern: str) -> dict[int, int]:
    """How many keys match ``pattern`` on each master (port -> count)."""
    found = {}
    for port in layout.master_ports:
        node = cluster_node(layout, port)
        try:
            found[port] = len(list(node.scan_iter(match=pattern, count=1000)))
        finally:
            node.close()
    return found


def _redirects(layout: ClusterState) -> int:
    """``MOVED`` and ``ASK`` replies the masters have sent so far."""
    total = 0
    for port in layout.master_ports:
        node = cluster_node(layout, port)
        try:
            stats = node.info("errorstats")
            total += sum(stats.get(f"errorstat_{e}", {}).get("count", 0) for e in ("MOVED", "ASK"))
        finally:
            node.close()
    return total


def _indexes_on(layout: ClusterState, port: int) -> set[str]:
    node = cluster_node(layout, port)
    try:
        return {n.decode() for n in node.execute_command("FT._LIST")}
    finally:
        node.close()


async def test_each_namespace_lives_on_one_shard_and_searches_find_only_its_own(
    csettings: Settings, cluster_redis: Redis, layout: ClusterState
) -> None:
    redirects = _redirects(layout)
    written: dict[str, list[str]] = {}
    for ns in NAMESPACES:
        async with AsyncMemoryClient(_on(csettings, ns)) as client:
            receipts = await client.write_many(
                [
                    {"content": f"Shard fact {n} of team {ns}: codeword {ns}xylo owns q{n}"}
                    for n in range(3)
                ]
            )
            written[ns] = [r.id for r in receipts]
    report = await Worker(csettings, namespaces="*").run_async(burst=True)
    assert report.indexed == 3 * len(NAMESPACES)
    homes = {}
    for ns in NAMESPACES:
        keys = Keys(csettings.key_prefix, ns)
        home = node_of(cluster_redis, keys.stream)
        assert home is not None
        homes[ns] = port = int(home.rsplit(":", 1)[1])
        where = _keys_on(layout, keys.pattern)
        assert where[port] >= 3 + 3 and sum(where.values()) == where[port]  # memories, stream..
        assert keys.index_name(1) in _indexes_on(layout, port)
        assert all(keys.index_name(1) not in _indexes_on(layout, p) for p in where if p != port)
        async with AsyncMemoryClient(_on(csettings, ns)) as client:
            hits = await client.search(f"{ns}xylo", top_k=10, mode="keyword")
            assert sorted(h.id for h in hits) == sorted(written[ns])
            other = "b" if ns != "b" else "a"
            assert await client.search(f"{other}xylo", mode="keyword") == []
    assert len(set(homes.values())) >= 2, homes  # the namespaces span shards
    assert _redirects(layout) == redirects  # every command went to its shard first time
    registry = Keys(csettings.key_prefix, "x").prefix + ":namespaces"
    assert {m.decode() for m in await cluster_redis.smembers(registry)} == set(NAMESPACES)  # type: ignore[misc]


async def test_restated_memories_merge_on_every_shard(csettings: Settings) -> None:
    """The dedup stage's lookups (one Lua call for many, ``scripts.neighbours``) run on the
    shard of each namespace's index: a restated memory merges into the stored one."""
    settings = csettings.model_copy(update={"dedup_threshold": 0.8})
    for text in (
        "Team {} deploys the billing service every Friday at noon",
        "team {} deploys the billing service every friday at noon!",
    ):
        for ns in NAMESPACES:
            async with AsyncMemoryClient(_on(settings, ns)) as client:
                await client.write(text.format(ns))
        report = await Worker(settings, namespaces="*").run_async(burst=True)
    assert report.merged == len(NAMESPACES) and report.indexed == 0


async def test_cross_namespace_reads_span_the_shards(
    csettings: Settings, cluster_redis: Redis
) -> None:
    from hindsight_redis.ops.metrics import MetricsApp
    from hindsight_redis.service.tokens import create_token, list_tokens, revoke_token, verify_token

    for ns in NAMESPACES:
        async with AsyncMemoryClient(_on(csettings, ns)) as client:
            await client.write(f"Metrics fact of {ns}")
    metrics = MetricsApp(csettings, cache_s=0)
    try:
        snapshot = await metrics.snapshot()  # every namespace's state, pipelined over shards
    finally:
        await metrics.aclose()
    assert snapshot.up and {s.namespace: s.accepted for s in snapshot.states} == dict.fromkeys(
        NAMESPACES, 1
    )
    prefix = csettings.key_prefix
    tokens = [
        await create_token(cluster_redis, prefix, namespace=ns, agent_id=f"agent-{ns}")
        for ns in NAMESPACES
    ]
    assert {t.namespace for t in await list_tokens(cluster_redis, prefix)} == set(NAMESPACES)
    principal = await verify_token(cluster_redis, prefix, tokens[2][0])
    assert principal is not None and principal.namespace == "c"
    assert await revoke_token(cluster_redis, prefix, tokens[2][1].token_id)
    assert await verify_token(cluster_redis, prefix, tokens[2][0]) is None


async def test_write_wait_search_forget_sweep_stats_and_reindex_per_namespace(
    csettings: Settings, cluster_redis: Redis
) -> None:
    worker = Worker(csettings, namespaces="*")
    running = asyncio.create_task(worker.run_async())
    try:
        for ns in NAMESPACES:
            async with AsyncMemoryClient(_on(csettings, ns)) as client:
                receipts = []
                for n in range(3):
                    text = f"Runbook {n} of {ns}: restart the {ns}-cache node"
                    receipts.append(await client.write(text, wait=True))
                assert {r.status for r in receipts} == {"indexed"}
                # (no search yet: the hits it counts would keep the sweep's victim)
                forgotten = await client.forget(receipts[0].id)
                assert forgotten.status == "archived"
                swept = await client.sweep(max_active=1)  # the lower-scored of the other two
                assert swept.archived == 1, swept
                hits = await client.search(f"{ns}-cache restart runbook", top_k=5)
                assert len(hits) == 1 and hits[0].id in {r.id for r in receipts[1:]}
                stats = await client.stats()
                assert stats["indexed"] == 3 and stats["backlog"] == 0
                assert stats["memories"] == {"active": 1, "archived": 2, "protected": 0}
    finally:
        worker.stop()
        await asyncio.wait_for(running, 30)
    keys = Keys(csettings.key_prefix, "c")
    new = await MemoryIndex(
        cluster_redis, keys, csettings.index, csettings.search, csettings.embedding
    ).reindex(HashEmbedder(dims=64))
    assert new.generation == 2 and new.name == keys.index_name(2)
    assert keys.index_name(1) not in await list_indexes(cluster_redis)
    counts = await MemoryIndex(
        cluster_redis, keys, csettings.index, csettings.search, csettings.embedding
    ).health()
    assert counts["num_docs"] == 3 and counts["hash_indexing_failures"] == 0


def test_cli_writes_serves_every_namespace_and_doctor_shows_the_shards(
    csettings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_KEY_PREFIX", csettings.key_prefix)
    monkeypatch.setenv("HINDSIGHT_CONTEXTUAL_EMBEDDER", "none")
    common = ["--redis-url", str(csettings.redis_url), "--embedder", "hash"]
    for ns in NAMESPACES:
        text = f"The {ns}-gateway certificate expires in June"
        assert main(["write", text, "--namespace", ns, *common]) == 0
    capsys.readouterr()
    assert main(["worker", "--all-namespaces", "--burst", *common]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] == 6
    assert main(["search", "d-gateway certificate", "--namespace", "d", "--json", *common]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 1 and "d-gateway" in hits[0]["content"]
    assert main(["doctor", "--namespace", "d", "--profile", "durable", *common]) == 0
    out = capsys.readouterr().out
    assert "cluster: ok, 3 shards, 16384/16384 slots" in out and "+ 1 replica(s)" in out
    assert "6 (3 masters, 3 replicas)" in out and "search module on every node" in out
    assert "d -> 127.0.0.1:" in out and "all checks passed" in out


async def test_an_index_named_before_0_2_is_rebuilt_on_its_shard(
    csettings: Settings, cluster_redis: Redis
) -> None:
    # Memories moved from a pre-0.2 server: their hashes and index record (naming
    # "{prefix}-b-idx-g1"), no index on their shard, and one under the old name on the
    # shard of that name (where an old process would have created it).
    keys = Keys(csettings.key_prefix, "b")
    async with AsyncMemoryClient(_on(csettings, "b")) as client:
        await client.write_many([{"content": f"Legacy fact {n} about bvault"} for n in range(4)])
    await Worker(_on(csettings, "b")).run_async(burst=True)
    legacy = f"{keys.legacy_index_alias}-g1"
    await cluster_redis.execute_command("FT.DROPINDEX", keys.index_name(1))  # type: ignore[no-untyped-call]
    await cluster_redis.hset(keys.index_meta, "name", legacy)
    await cluster_redis.execute_command(  # type: ignore[no-untyped-call]
        "FT.CREATE",
        legacy,
        "ON",
        "HASH",
        "PREFIX",
        "1",
        keys.doc_prefix,
        "SCHEMA",
        "content",
        "TEXT",
    )
    async with AsyncMemoryClient(_on(csettings, "b")) as client:
        hits = await client.search("bvault legacy fact", top_k=10, mode="keyword")
        assert len(hits) == 4  # through the index rebuilt under the new name, on their shard
    names = await list_indexes(cluster_redis)
    assert keys.index_name(1) in names and legacy not in names
    assert await cluster_redis.hget(keys.index_meta, "name") == keys.index_name(1).encode()


async def test_searches_served_by_replicas_still_read_their_own_writes(
    csettings: Settings, layout: ClusterState
) -> None:
    replicas = [p for p in layout.ports if p not in layout.master_ports]
    before = _searches_on(layout, replicas)
    settings = _on(csettings, "e").model_copy(update={"read_from_replicas": True})
    worker = Worker(settings)
    running = asyncio.create_task(worker.run_async())
    try:
        async with AsyncMemoryClient(settings) as client:
            for n in range(8):
                receipt = await client.write(f"Replica fact {n}: codeword erepl{n}", wait=True)
                hits = await client.search(f"erepl{n}", mode="keyword")
                assert [h.id for h in hits] == [receipt.id]
    finally:
        worker.stop()
        await asyncio.wait_for(running, 30)
    assert _searches_on(layout, replicas) > before  # some were served by a replica


def _searches_on(layout: ClusterState, ports: list[int]) -> int:
    """FT.SEARCH calls the nodes on ``ports`` have served."""
    total = 0
    for port in ports:
        node = cluster_node(layout, port)
        try:
            stats = node.info("commandstats")
            total += int(stats.get("cmdstat_FT.SEARCH", {}).get("calls", 0))
        finally:
            node.close()
    return total


async def test_a_durable_write_is_not_acknowledged_while_its_replica_is_stopped(
    csettings: Settings, cluster_redis: Redis, local_cluster: LocalCluster, layout: ClusterState
) -> None:
    # Replication over loopback always wins the race, so only a stopped replica shows
    # that a durable write waits for one (WAIT 1) and is refused when none answers.
    settings = _on(csettings, "b").model_copy(update={"waitaof_timeout_ms": 300})
    master = node_of(cluster_redis, Keys(settings.key_prefix, "b").stream)
    assert master is not None
    replica = layout.replica_ports(layout.master_ports.index(int(master.rsplit(":", 1)[1])))
    pid = local_cluster.node(replica[0]).state().pid  # type: ignore[union-attr]
    async with AsyncMemoryClient(settings) as client:
        await client.write("Replicated fact before the pause: job b0 ran")

        async def replica_known() -> bool:  # listed once its offset moved (a fresh cluster)
            await refresh_topology(client.redis)
            return replicas_of(client.redis, client.keys.stream) == 1

        await wait_for(replica_known, 10)
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(WriteTimeout, match="no replica of its shard acknowledged"):
                await client.write("Fact written while the replica sleeps: job b1 ran")
            waited_s = time.monotonic() - started
        finally:
            os.kill(pid, signal.SIGCONT)
        # It waited its WAIT out (300 ms), and was refused, not left hanging: the topology
        # refresh after the refusal may wait out the socket timeout of the stopped node.
        assert 0.25 <= waited_s < 15, waited_s
        receipt = await client.write("Replicated fact after the pause: job b2 ran")
        assert receipt.stream_id


async def test_a_master_killed_mid_writes_loses_no_acknowledged_write(
    csettings: Settings, cluster_redis: Redis, local_cluster: LocalCluster, layout: ClusterState
) -> None:
    """Writes pause for the victim's namespace only, resume within 30 s, nothing is lost or
    doubled; a client whose one seed was the victim goes on (a new process of that seed
    alone cannot: test_cli_mistakes); the victim, restarted, rejoins as a replica of the
    node that took over."""
    victim_ns = "a"
    victim = node_of(cluster_redis, Keys(csettings.key_prefix, victim_ns).stream)
    assert victim is not None
    victim_port = int(victim.rsplit(":", 1)[1])
    replica = layout.replica_ports(layout.master_ports.index(victim_port))[0]
    writing = ("a", "b", "c")  # the victim's and the other shards'
    elsewhere = [
        ns
        for ns in writing
        if node_of(cluster_redis, Keys(csettings.key_prefix, ns).stream) != victim
    ]
    assert elsewhere  # some namespace lives on another shard
    seed_only = f"redis+cluster://{layout.host}:{victim_port}"
    one_seed = await open_redis(seed_only, connection=csettings.connection)
    acked: dict[str, list[str]] = {ns: [] for ns in writing}
    acked_at: dict[str, list[float]] = {ns: [] for ns in writing}
    failed: dict[str, list[str]] = {ns: [] for ns in (*writing, "search")}
    pauses: dict[str, float] = dict.fromkeys((*writing, "search"), 0.0)  # longest call
    stop = asyncio.Event()

    async def write(ns: str) -> None:
        async with AsyncMemoryClient(_on(csettings, ns)) as client:
            n = 0
            while not stop.is_set():
                started = time.monotonic()
                try:
                    receipt = await client.write(f"Failover fact {n} of {ns}: job {ns}{n} ran")
                    acked[ns].append(receipt.id)
                    acked_at[ns].append(time.monotonic())
                except (RedisUnavailable, WriteTimeout) as e:
                    failed[ns].append(f"{type(e).__name__}: {e}")
                pauses[ns] = max(pauses[ns], time.monotonic() - started)
                n += 1
                await asyncio.sleep(0.02)  # a steady trickle: enough to see the pause

    async def search() -> None:
        async with AsyncMemoryClient(_on(csettings, victim_ns)) as client:
            while not stop.is_set():
                started = time.monotonic()
                try:
                    await client.search("failover fact job", top_k=3, mode="keyword")
                except RedisUnavailable as e:
                    failed["search"].append(f"{type(e).__name__}: {e}")
                pauses["search"] = max(pauses["search"], time.monotonic() - started)
                await asyncio.sleep(0.01)  # a steady stream of searches through the failover

    worker = Worker(csettings, namespaces="*")
    tasks = [asyncio.create_task(worker.run_async())]
    tasks += [asyncio.create_task(write(ns)) for ns in writing]
    tasks.append(asyncio.create_task(search()))
    try:

        async def some_written() -> bool:
            return all(len(ids) >= 30 for ids in acked.values())

        await wait_for(some_written, 30)
        pid = local_cluster.node(victim_port).state().pid  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
        killed_at, before = time.monotonic(), {ns: len(ids) for ns, ids in acked.items()}

        async def promoted() -> bool:
            return (await asyncio.to_thread(local_cluster.roles))[replica] == "master"

        await wait_for(promoted, 30)
        promoted_after_s = time.monotonic() - killed_at

        async def writes_resumed() -> bool:  # the same clients, no restart
            return all(len(acked[ns]) >= before[ns] + 20 for ns in writing)

        await wait_for(writes_resumed, 30)
        # The client whose one seed was the victim asks the nodes it discovered; so does a
        # new client of that seed in this process.
        assert await one_seed.exists(Keys(csettings.key_prefix, victim_ns).stream) == 1
        again = await open_redis(seed_only, connection=csettings.connection)
        assert await again.exists(Keys(csettings.key_prefix, victim_ns).stream) == 1
        await again.aclose()
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks[1:]), 60)
        await one_seed.aclose()
    try:

        async def all_indexed() -> bool:
            backlogs = [(await _stats(csettings, ns))["backlog"] for ns in writing]
            return not any(backlogs)

        await wait_for(all_indexed, 60)
    finally:
        worker.stop()
        await asyncio.wait_for(tasks[0], 30)
    print(
        f"\nFAILOVER promoted after {promoted_after_s:.1f}s; longest call "
        + ", ".join(f"{name} {pause:.1f}s" for name, pause in pauses.items())
        + "; acknowledged "
        + ", ".join(f"{ns}={len(acked[ns])} (failed {len(failed[ns])})" for ns in writing)
        + f"; searches failed {len(failed['search'])}"
        + "".join(f"\n  {e}" for errors in failed.values() for e in errors)
    )
    for ns in writing:
        async with AsyncMemoryClient(_on(csettings, ns)) as client:
            stats = await client.stats()
            active = stats["memories"]["active"]
            # Every acknowledged write is there, once; a write that failed may be too.
            assert len(set(acked[ns])) == len(acked[ns])
            for memory_id in acked[ns]:
                record = await client.get(memory_id)
                assert record is not None and record.status == "active", memory_id
            assert len(acked[ns]) <= active <= len(acked[ns]) + len(failed[ns])
            assert stats["indexed"] == active  # none indexed twice
    assert max(pauses.values()) < csettings.cluster_retry_s
    # The victim's pause: its longest gap between acks that ends after the kill (a write
    # answered before the kill may be read just after it).
    paused_from, resumed = max(
        ((a, b) for a, b in itertools.pairwise(acked_at[victim_ns]) if b > killed_at),
        key=lambda gap: gap[1] - gap[0],
    )
    assert paused_from <= killed_at + 2 and resumed - killed_at < 30  # the failover's gap
    for ns in elsewhere:  # other shards' namespaces kept writing while the victim paused
        assert sum(paused_from < t < resumed for t in acked_at[ns]) >= 3, ns

    await asyncio.to_thread(local_cluster.node(victim_port).start)  # its port, dir, config

    async def rejoined() -> bool:
        return await asyncio.to_thread(local_cluster.master_of, victim_port) == replica

    await wait_for(rejoined, 60)
    assert (await asyncio.to_thread(local_cluster.roles))[victim_port] == "replica"


async def _stats(settings: Settings, ns: str) -> dict[str, int]:
    async with AsyncMemoryClient(_on(settings, ns)) as client:
        return await client.stats()
