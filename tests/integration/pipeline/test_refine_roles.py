"""Refining under writes: the refine share, the roles of a worker, newest first, the lag."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.core.keys import Keys
from hindsight_redis.pipeline.assembly import PipelineSettings, build_pipeline, shared_parts
from hindsight_redis.pipeline.refine import OLDEST_EVERY, RECENT_S
from hindsight_redis.settings import Settings
from tests.integration.helpers import write_and_drain

FACTS = [
    "Frank rides his bike to the office when it does not rain",
    "The search-api pods restart every night at 03:10 after the cache flush",
    "Grace renewed the company domain for three more years",
    "Heidi keeps the printer toner in the supply closet by the lift",
    "The design review for the mobile app moved to Thursday afternoon",
    "Ivan takes his coffee black with no sugar",
]


def _turns(count: int) -> list[dict[str, str]]:
    """Distinct memories that pass the filters (no two merge)."""
    return [
        {"content": f"{FACTS[n % len(FACTS)]}, noted in review {n} by team {n * 7919 % 1000}"}
        for n in range(count)
    ]


async def _refined_while_behind(settings: Settings, writes: int) -> bool:
    """Write ``writes`` memories, run a burst worker over the backlog (it refines between
    rounds only, no background task) and watch: did any memory get its contextual vector
    while writes were still waiting for the worker?"""
    async with AsyncMemoryClient(settings) as client:
        items = _turns(writes)
        for start in range(0, writes, 500):
            await client.write_many(items[start : start + 500])
        task = asyncio.create_task(Worker(settings).run_async(burst=True))
        seen = False
        while True:
            stats = await client.stats()
            if stats["processed"] >= writes:
                break
            indexed, waiting = stats["indexed"], stats["refine_pending"] or 0
            seen = seen or (indexed > 0 and waiting < indexed)
            await asyncio.sleep(0.01)
        report = await task
        assert report.refined == report.indexed  # a burst refines everything before it exits
    return seen


async def test_a_share_of_the_time_refines_while_a_backlog_waits(settings: Settings) -> None:
    small = {"worker_batch_size": 64, "refine_batch_size": 4}
    shared = settings.model_copy(update={**small, "refine_share": 0.5})
    assert await _refined_while_behind(shared, 1500)
    # without a share, the worker refines only once it caught up with the writes
    idle_only = settings.model_copy(update={**small, "refine_share": 0.0, "namespace": "other"})
    assert not await _refined_while_behind(idle_only, 1500)


async def test_a_running_worker_refines_beside_ingest(settings: Settings) -> None:
    async with AsyncMemoryClient(settings) as client:
        await client.write_many(_turns(300))
        worker = Worker(settings)
        task = asyncio.create_task(worker.run_async())
        try:
            async with asyncio.timeout(120):
                while True:
                    stats = await client.stats()
                    if stats["processed"] == 300 and stats["refine_pending"] == 0:
                        break
                    await asyncio.sleep(0.05)
        finally:
            worker.stop()
            report = await task
    assert report.indexed == stats["indexed"] and report.refined == report.indexed
    assert stats["refine_lag_s"] == 0


async def test_ingest_and_refine_roles_split_the_work(settings: Settings, redis: Redis) -> None:
    ids, report = await write_and_drain(
        settings.model_copy(update={"worker_role": "ingest"}), FACTS
    )
    assert report.indexed == len(FACTS) and report.refined == 0
    async with AsyncMemoryClient(settings) as client:
        stats = await client.stats()
        assert stats["refine_pending"] == len(FACTS)
        assert stats["refine_lag_s"] > 0  # the oldest of them has waited since it was written
        # a refiner reads no stream: a write waits for an ingest worker
        receipt = await client.write("Dave keeps the spare office keys in the top drawer")
        refiner = await Worker(settings, role="refine").run_async(burst=True)
        assert refiner.refined == len(FACTS) and refiner.indexed == 0
        stats = await client.stats()
        assert stats["refine_pending"] == 0 and stats["refine_lag_s"] == 0
        assert stats["backlog"] == 1 and stats["undelivered"] == 1
        assert (await client.stats())["processed"] == len(FACTS)  # the write still waits
    assert (await Worker(settings, role="ingest").run_async(burst=True)).indexed == 1
    assert receipt.id not in ids
    keys = Keys(settings.key_prefix, settings.namespace)
    for memory_id in ids:
        assert await redis.hget(keys.doc(memory_id), "refine") == b"done"


async def test_the_refiner_takes_recent_memories_oldest_first(settings: Settings) -> None:
    async with AsyncMemoryClient(settings) as client:
        await client.search("anything", top_k=1)  # the index, with its contextual field
    # committed by a worker without the model, one at a time: created in this order
    plain = settings.model_copy(update={"contextual_embedder": "none"})
    ids = [(await write_and_drain(plain, [fact]))[0][0] for fact in FACTS]
    groups = PipelineSettings(
        settings.worker, settings.dedup, settings.index, settings.search, settings.embedding
    )
    shared = shared_parts(settings.embedding, settings.filters, settings.llm)
    async with AsyncMemoryClient(settings) as client:
        redis = client.redis
        for memory_id in ids[:2]:  # written two minutes ago: out of the recent window
            old = float(await redis.hget(client.keys.doc(memory_id), "created_at") or 0) - 120
            await redis.hset(client.keys.doc(memory_id), "created_at", f"{old:.6f}")
        built = await build_pipeline(redis, client.keys, groups, shared)
        refiner = built.refiner
        assert refiner is not None
        assert [p.content for p in await refiner.pending(10)] == FACTS
        assert [p.content for p in await refiner.pending(10, newest=True)] == FACTS[::-1]
        recent = await refiner.pending(10, since=time.time() - RECENT_S)
        assert [p.content for p in recent] == FACTS[2:]
        refiner.batch_size = 2

        async def states() -> list[bytes | None]:
            return [await redis.hget(client.keys.doc(i), "refine") for i in ids]

        assert await refiner.refine_once() == 2
        assert await states() == [b"pending"] * 2 + [b"draft"] * 2 + [b"pending"] * 2
        refiner._steps = OLDEST_EVERY - 1  # the next is an OLDEST_EVERY-th step
        assert await refiner.refine_once() == 2
        assert await states() == [b"draft"] * 4 + [b"pending"] * 2  # the oldest of all
        assert await refiner.refine_once(between_rounds=True) == 2  # the last pending two
        assert await refiner.refine_once(between_rounds=True) == 0  # drafts wait: no redo
        assert await states() == [b"draft"] * 6
        while await refiner.refine_once():
            pass
        assert await states() == [b"done"] * 6  # once none is pending, every draft is redone
        assert refiner.redone == 6
