"""Forgetting on a real Redis: protection, retention sweeps, their safety and their lease."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.errors import MemoryProtected, NotFound, SweepBusy
from hindsight_redis.lifecycle.forgetting import SweepLease, apply_sweep, plan_sweep
from hindsight_redis.lifecycle.retention import RetentionPolicy
from tests.integration.helpers import Drain, hash_writes, wait_for

DAY = 86_400.0
HERE = Path(__file__).parents[1]  # sweep_process.py lives beside the fixtures
SERVICES = ["billing", "search", "auth", "payments", "ingest", "gateway", "reports", "mail"]


def facts(n: int, start: int = 0, **fields: object) -> list[dict[str, object]]:
    """``n`` distinct, useful memories (the filters keep them, dedup does not merge them)."""
    return [
        {
            "content": f"The {SERVICES[i % 8]} service {i} of team {i * 7919 % 1000} runs on "
            f"port {8000 + i} in region eu-{i % 5} since release v{i % 9}.{i % 13}",
            **fields,
        }
        for i in range(start, start + n)
    ]


async def seed(
    client: AsyncMemoryClient, drain: Drain, items: list[dict[str, object]]
) -> list[str]:
    """Write ``items`` and drain; every one must be indexed."""
    receipts = await client.write_many(items)
    await drain()
    ids = [r.id for r in receipts]
    for memory_id in ids:
        record = await client.get(memory_id)
        assert record is not None and record.status == "active", record
    return ids


async def age(
    redis: Redis, client: AsyncMemoryClient, ids: list[str], days: float, reads: int = 0
) -> None:
    """Make memories look ``days`` old and read ``reads`` times (time cannot pass in a test)."""
    stamp = f"{time.time() - days * DAY:.6f}"
    async with redis.pipeline(transaction=False) as pipe:
        for memory_id in ids:
            pipe.hset(
                client.keys.doc(memory_id),
                mapping={"created_at": stamp, "last_accessed_at": stamp, "access_count": reads},
            )
        await pipe.execute()


async def statuses(client: AsyncMemoryClient, ids: list[str]) -> dict[str, str]:
    found = {}
    for memory_id in ids:
        record = await client.get(memory_id)
        assert record is not None
        found[memory_id] = record.status
    return found


async def snapshot(redis: Redis, client: AsyncMemoryClient) -> dict[bytes, dict[bytes, bytes]]:
    """Every key of the namespace's memories, and the access log, field by field."""
    keys = [k async for k in redis.scan_iter(match=f"{client.keys.doc_prefix}*", count=1000)]
    keys.append(client.keys.access_log.encode())
    return {k: await redis.hgetall(k) for k in sorted(keys)}


# -- protection -------------------------------------------------------------------


async def test_forgetting_a_protected_memory_fails_without_force(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    [kept, plain] = await seed(client, drain, [*facts(1, protected=True), *facts(1, start=1)])
    with pytest.raises(MemoryProtected, match="protected"):
        await client.forget(kept)
    assert (await client.get(kept)).status == "active"  # type: ignore[union-attr]
    assert (await client.forget(plain)).status == "archived"
    forced = await client.forget(kept, force=True)
    assert forced.status == "archived" and forced.archived_at
    assert forced.archive_reason and "forced" in forced.archive_reason
    restored = await client.restore(kept)
    assert restored.status == "active" and restored.archived_at is None
    with pytest.raises(NotFound):
        await client.forget("no-such-memory")


async def test_protecting_later_also_guards_against_forget(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    [memory_id] = await seed(client, drain, facts(1))
    await client.protect(memory_id)
    with pytest.raises(MemoryProtected):
        await client.forget(memory_id)
    await client.protect(memory_id, False)
    assert (await client.forget(memory_id)).status == "archived"


# -- sweeps -----------------------------------------------------------------------


async def test_a_dry_run_lists_the_lowest_and_changes_nothing(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    ids = await seed(client, drain, facts(30, task_type="dialogue"))
    for n, memory_id in enumerate(ids):
        await age(redis, client, [memory_id], days=n * 5)
    await client.search("billing service port", top_k=3)  # pending hits in the access log
    await wait_for(lambda: redis.hlen(client.keys.access_log))  # counted in the background
    before = await snapshot(redis, client)
    report = await client.sweep(dry_run=True, max_active=10, show=0)
    assert report.dry_run and report.to_archive == 20 and report.archived == 0
    assert report.active_before == 30 and report.active_after == 10
    assert [c.score for c in report.lowest] == sorted(c.score for c in report.lowest)
    assert report.lowest[0].id == ids[-1]  # the oldest unread memory scores lowest
    assert all(
        c.snippet and set(c.parts) >= {"frequency", "recency", "write"} for c in report.lowest
    )
    assert await snapshot(redis, client) == before


async def test_max_active_leaves_that_many_and_keeps_the_protected_one(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    [guarded] = await seed(client, drain, facts(1, protected=True))
    ids = await seed(client, drain, facts(29, start=1))
    await age(redis, client, [guarded], days=3000)  # the oldest of all: lowest but protected
    for n, memory_id in enumerate(ids):
        await age(redis, client, [memory_id], days=n)
    report = await client.sweep(max_active=10)
    assert report.archived == 20 and report.kept_changed == 0 and report.protected == 1
    stats = await client.stats()
    assert stats["memories"] == {"active": 10, "archived": 20, "protected": 1}
    assert (await client.get(guarded)).status == "active"  # type: ignore[union-attr]
    newest = await statuses(client, ids[:9])
    assert set(newest.values()) == {"active"}  # the 9 most recent stay, with the protected one
    archived = await client.get(ids[-1])
    assert archived is not None and archived.archive_reason
    assert "max_active 10" in archived.archive_reason
    assert (await client.sweep(max_active=10)).archived == 0


async def test_a_threshold_sweep_archives_old_unread_memories_only(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    old = await seed(client, drain, facts(5, task_type="dialogue"))
    read = await seed(client, drain, facts(5, start=5, task_type="dialogue"))
    lasting = await seed(client, drain, facts(5, start=10, task_type="preference"))
    own = await seed(client, drain, facts(5, start=15, task_type="dialogue", half_life_days=2000))
    fresh = await seed(client, drain, facts(5, start=20, task_type="dialogue"))
    await age(redis, client, old + lasting + own, days=120)
    await age(redis, client, read, days=120, reads=50)
    report = await client.sweep()  # the default threshold, 0.25
    assert report.threshold == 0.25 and report.archived == 5
    assert set((await statuses(client, old)).values()) == {"archived"}
    for kept in (read, lasting, own, fresh):
        assert set((await statuses(client, kept)).values()) == {"active"}


async def test_what_changes_after_the_plan_is_not_archived(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    ids = await seed(client, drain, facts(12))
    await age(redis, client, ids, days=400)
    plan = await plan_sweep(redis, client.keys, RetentionPolicy(), threshold=0.5, max_active=None)
    assert {v.id for v in plan.victims} == set(ids)
    hit, read, guarded, forgotten = ids[:4]
    await redis.hincrby(client.keys.access_log, hit, 1)  # found by a search, not folded yet
    await redis.hset(
        client.keys.doc(read), mapping={"access_count": 1, "last_accessed_at": f"{time.time():.6f}"}
    )
    await client.protect(guarded)
    await client.forget(forgotten)
    archived, kept, interrupted = await apply_sweep(redis, client.keys, plan)
    assert (archived, kept, interrupted) == (8, 4, False)
    assert await statuses(client, [hit, read, guarded]) == dict.fromkeys(
        [hit, read, guarded], "active"
    )


async def test_a_sweep_beside_writes_and_searches_archives_only_what_it_planned(
    settings: Settings, client: AsyncMemoryClient, drain: Drain, redis: Redis, worker: object
) -> None:
    old = await seed(client, drain, facts(300))
    await age(redis, client, old, days=365)
    new_items = facts(100, start=300)
    stop = asyncio.Event()

    async def search_loop() -> int:
        done = 0
        while not stop.is_set():
            await client.search("payments service port", top_k=5)
            done += 1
        return done

    searches = asyncio.create_task(search_loop())
    writes = asyncio.create_task(client.write_many(new_items))
    report = await client.sweep(max_active=250)
    receipts = await writes
    new_ids = [r.id for r in receipts]

    async def all_indexed() -> bool:
        return all([(await client.get(i)) is not None for i in new_ids])

    await wait_for(all_indexed)
    stop.set()
    assert await searches > 0
    # The plan is 50; a victim the searches read meanwhile stays active (kept_changed).
    assert report.to_archive == 50 and report.archived + report.kept_changed == 50
    assert report.archived >= 40
    assert set((await statuses(client, new_ids)).values()) == {"active"}
    second = await client.sweep(max_active=250)
    assert (await client.stats())["memories"]["active"] == 250
    archived = [i for i, s in (await statuses(client, old)).items() if s == "archived"]
    assert len(archived) == report.archived + second.archived == 150


async def test_only_one_sweeper_at_a_time(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    await seed(client, drain, facts(3))
    lease = SweepLease(redis, client.keys, ttl_s=30)
    await lease.acquire()
    with pytest.raises(SweepBusy, match="another sweep"):
        await client.sweep(max_active=1)
    assert (await client.sweep(max_active=1, dry_run=True)).to_archive == 2  # reads need no lease
    await lease.release()
    assert (await client.sweep(max_active=1)).archived == 2


async def test_the_lease_of_a_dead_sweeper_on_this_host_is_taken_over(
    client: AsyncMemoryClient, redis: Redis
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    await redis.set(client.keys.sweep_lease, f"{socket.gethostname()}:{gone.pid}:x", px=60_000)
    lease = SweepLease(redis, client.keys, ttl_s=30)
    await lease.acquire()
    assert (await redis.get(client.keys.sweep_lease)).decode() == lease.holder  # type: ignore[union-attr]
    await lease.release()
    await redis.set(client.keys.sweep_lease, f"{socket.gethostname()}:{os.getpid()}:y", px=60_000)
    with pytest.raises(SweepBusy):
        await SweepLease(redis, client.keys, ttl_s=30).acquire()  # alive: not taken
    await redis.delete(client.keys.sweep_lease)


async def test_a_sweeper_killed_mid_sweep_leaves_no_half_done_memory_and_a_rerun_finishes(
    settings: Settings, client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    ids = await seed(client, drain, facts(400))
    await age(redis, client, ids, days=30)
    env = {**os.environ, **settings.to_env(), "PYTHONPATH": str(HERE.parent.parent)}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "sweep_process.py"), "100", "25", "0.5"], env=env
    )
    try:

        async def some_archived() -> bool:
            return (await client.stats())["memories"]["archived"] > 0

        await wait_for(some_archived, timeout_s=60)
    finally:
        proc.kill()
        proc.wait()
    counts = (await client.stats())["memories"]
    assert 0 < counts["archived"] < 300, counts  # killed part way
    for memory_id in ids:
        raw = await redis.hmget(
            client.keys.doc(memory_id), ["status", "archived_at", "archive_reason"]
        )
        archived = raw[0] == b"archived"
        assert archived == bool(raw[1]) == bool(raw[2]), raw  # all of the archive, or none
    report = await client.sweep(max_active=100)  # the dead sweeper's lease is taken over
    assert report.archived == 300 - counts["archived"]
    assert (await client.stats())["memories"] == {"active": 100, "archived": 300, "protected": 0}


async def test_a_sweeper_killed_inside_a_step_leaves_no_half_done_memory(
    settings: Settings, client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    # The test above kills between steps (where its sweeper sleeps); here the sweeper
    # kills itself after the 2nd, then the 3rd round trip of its archiving phase (the 1st
    # renews the lease), so a memory archived in two round trips is caught half done.
    ids = await seed(client, drain, facts(48))
    await age(redis, client, ids, days=30)
    env = {**os.environ, **settings.to_env(), "PYTHONPATH": str(HERE.parent.parent)}
    sweeper = [sys.executable, str(HERE / "sweep_process.py"), "8", "25", "0"]
    for kill_after in (2, 3):
        proc = subprocess.run([*sweeper, str(kill_after)], env=env, timeout=60, check=False)
        assert proc.returncode == -signal.SIGKILL  # died mid-sweep, by its own kill
        for memory_id in ids:
            raw = await redis.hmget(
                client.keys.doc(memory_id), ["status", "archived_at", "archive_reason"]
            )
            archived = raw[0] == b"archived"
            assert archived == bool(raw[1]) == bool(raw[2]), (kill_after, raw)
    counts = (await client.stats())["memories"]
    assert 0 < counts["archived"] < 40, counts
    report = await client.sweep(max_active=8)  # a rerun finishes the job
    assert report.archived == 40 - counts["archived"]


async def test_a_worker_sweeps_periodically(settings: Settings, drain: Drain, redis: Redis) -> None:
    from hindsight_redis import Worker

    periodic = settings.model_copy(
        update={"sweep_interval_s": 0.2, "sweep_threshold": None, "sweep_max_active": 5}
    )
    async with AsyncMemoryClient(periodic) as client:
        ids = await seed(client, drain, facts(12))
        await age(redis, client, ids, days=10)
        worker = Worker(periodic, name="sweeping-worker")
        task = asyncio.create_task(worker.run_async())
        try:

            async def swept() -> bool:
                return (await client.stats())["memories"]["active"] == 5

            await wait_for(swept)
        finally:
            worker.stop()
            await asyncio.wait_for(task, 30)


async def test_searches_cost_a_bounded_number_of_writes_to_a_hot_memory(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    from hindsight_redis.lifecycle.access import flush_access_log

    [hot] = await seed(client, drain, facts(1))
    async with hash_writes(redis, client.keys.doc(hot)) as writes:
        for n in range(1000):
            hits = await client.search("billing service port", top_k=1)
            assert hits and hits[0].id == hot
            if n % 250 == 249:
                assert client._searcher is not None  # hits are counted in the background
                await client._searcher.hit_counter.drain()
                await flush_access_log(redis, client.keys)  # what a worker does every 5 s
    assert writes.count == 4  # one write per fold, not one per search
    record = await client.get(hot)
    assert record is not None and record.access_count == 1000
