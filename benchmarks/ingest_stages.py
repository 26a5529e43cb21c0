"""Worker CPU and Redis CPU per memory, by stage of the default pipeline.

    python benchmarks/ingest_stages.py              # 20,000 memories (benchmarks/README.md)
    python benchmarks/ingest_stages.py --count 5000

The texts of ``ingest.py``'s end-to-end run go through the worker's steps in
one process, one batch (``worker_batch_size``) after the other, against one embedded Redis:
decode (the stream entry's msgpack), the stages (rules, score, summarize,
embed, dedup) and the commit. Nothing else runs meanwhile, so a stage's
worker CPU is the process's CPU while it runs (its thread alone, and all
threads: the tokenizer's pool, a BLAS pool) and its Redis CPU is the change
of ``INFO cpu`` across it. The stream read and the worker's loop are not in
it (``ingest.py`` times the whole).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis import Settings
from hindsight_redis.codec import EVENT_FIELD, decode_event, encode_event
from hindsight_redis.keys import Keys
from hindsight_redis.models import build_event
from hindsight_redis.pipeline.assembly import PipelineSettings, build_pipeline, shared_parts
from hindsight_redis.pipeline.base import Candidate
from hindsight_redis.pipeline.commit import Committer

from common import embedded_redis
from ingest import e2e_texts

BATCH = Settings().worker_batch_size
_T = TypeVar("_T")


async def _redis_cpu(redis: aioredis.Redis) -> float:
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def stages(url: str, count: int) -> None:
    """Print the table of CPU per memory by stage for ``count`` memories."""
    settings = Settings(redis_url=url, key_prefix=f"b{uuid.uuid4().hex[:8]}", namespace="bench")
    redis = aioredis.Redis.from_url(url)
    keys = Keys(settings.key_prefix, settings.namespace)
    shared = shared_parts(settings.embedding, settings.filters, settings.llm)
    groups = PipelineSettings(
        settings.worker, settings.dedup, settings.index, settings.search, settings.embedding
    )
    built = await build_pipeline(redis, keys, groups, shared)
    committer = Committer(
        redis, keys, vector_field=built.vector_field, vector_datatype=built.vector_datatype,
        generation=built.generation,
        outcome_ttl_s=settings.outcome_ttl_s, contextual=built.contextual,
    )  # fmt: skip
    events = [
        build_event("bench", {"content": t}, max_content_chars=32_000, max_tags=32)
        for t in e2e_texts(count)
    ]
    payloads = [{EVENT_FIELD: encode_event(event)} for event in events]
    own: dict[str, float] = {}  # this thread's CPU, by step
    every: dict[str, float] = {}  # the process's
    server: dict[str, float] = {}  # Redis's
    outcomes: dict[str, int] = {}

    async def step(name: str, run: Awaitable[_T]) -> _T:
        thread, process, red = time.thread_time(), time.process_time(), await _redis_cpu(redis)
        result = await run
        own[name] = own.get(name, 0.0) + time.thread_time() - thread
        every[name] = every.get(name, 0.0) + time.process_time() - process
        server[name] = server.get(name, 0.0) + await _redis_cpu(redis) - red
        return result

    async def decode(first: int) -> list[Candidate]:
        found = []
        for n, fields in enumerate(payloads[first : first + BATCH]):
            event = decode_event(fields)
            found.append(Candidate(entry_id=f"{first}-{n}", event=event, content=event.content))
        return found

    measured = 0
    for first in range(0, count, BATCH):
        if first == BATCH:  # the first batch loads the models
            for table in (own, every, server):
                table.clear()
        candidates = await step("decode", decode(first))
        for stage in built.stages:
            await step(stage.name, stage.process(candidates))
        done = await step("commit", committer.commit(candidates))
        for outcome, n in done.items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
        measured += len(candidates) if first >= BATCH else 0
    await redis.aclose()
    print(f"\n## CPU per memory by stage ({measured:,} memories after a warm-up batch; {outcomes})")
    print("| step | worker, its thread (ms) | worker, all threads (ms) | Redis (ms) |")
    print("|---|---:|---:|---:|")
    for name in own:
        red = server[name] / measured * 1000
        print(
            f"| {name} | {own[name] / measured * 1000:.3f} | {every[name] / measured * 1000:.3f}"
            f" | {red:.3f} |"
        )
    totals = [sum(d.values()) / measured * 1000 for d in (own, every, server)]
    print(f"| total | {totals[0]:.3f} | {totals[1]:.3f} | {totals[2]:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=20_000)
    args = parser.parse_args()
    with embedded_redis() as url:
        asyncio.run(stages(url, args.count))


if __name__ == "__main__":
    main()
