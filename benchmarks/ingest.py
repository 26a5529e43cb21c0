"""Ingest benchmark: write throughput against raw XADD, end-to-end indexing against raw
HSETs into the index (the ceiling), index lag.

    python benchmarks/ingest.py                # full run (figures in benchmarks/README.md)
    python benchmarks/ingest.py --quick        # smaller sizes

Everything runs against one embedded Redis started for the run; ratios
compare against baselines measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.codec import EVENT_FIELD, encode_event
from hindsight_redis.index import MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import build_event
from hindsight_redis.pipeline.base import Candidate
from hindsight_redis.pipeline.commit import doc_from_candidate
from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings

from common import embedded_redis, locomo_turns, percentile

BATCH = 500


def _settings(url: str, embedder: str, **extra: object) -> Settings:
    return Settings(
        redis_url=url, key_prefix=f"b{uuid.uuid4().hex[:8]}", namespace="bench",
        profile="ephemeral",
        embedder=embedder, max_backlog=10_000_000, **extra,
    )  # fmt: skip


async def write_throughput(
    url: str, texts: list[str], n_single: int, n_batch: int, rounds: int = 3
) -> dict[str, float]:
    """Writes/s of raw XADD (single, pipelined) and of write() / write_many().

    The four are run in turn, ``rounds`` times, and each keeps its best
    round: on a shared 2-core machine that compares like with like.
    """
    raw = aioredis.Redis.from_url(url)
    payloads = [
        encode_event(build_event("bench", {"content": t}, max_content_chars=32_000, max_tags=32))
        for t in texts
    ]
    stream = f"raw-{uuid.uuid4().hex}"

    async def raw_single() -> None:
        for n in range(n_single):
            await raw.xadd(stream, {EVENT_FIELD: payloads[n % len(payloads)]})

    async def raw_pipelined() -> None:
        for first in range(0, n_batch, BATCH):
            pipe = raw.pipeline(transaction=False)
            for n in range(first, min(first + BATCH, n_batch)):
                pipe.xadd(stream, {EVENT_FIELD: payloads[n % len(payloads)]})
            await pipe.execute()

    async def single(client: AsyncMemoryClient) -> None:
        for n in range(n_single):
            await client.write(texts[n % len(texts)])

    async def batched(client: AsyncMemoryClient) -> None:
        for first in range(0, n_batch, BATCH):
            end = min(first + BATCH, n_batch)
            await client.write_many([{"content": texts[n % len(texts)]} for n in range(first, end)])

    out: dict[str, float] = {}
    async with AsyncMemoryClient(_settings(url, "hash")) as client:
        runs = [
            ("raw XADD (single)", raw_single, n_single),
            ("write()", lambda: single(client), n_single),
            ("raw XADD (pipelined 500)", raw_pipelined, n_batch),
            ("write_many(500)", lambda: batched(client), n_batch),
        ]
        for _ in range(rounds):
            for name, run, count in runs:
                start = time.perf_counter()
                await run()
                out[name] = max(out.get(name, 0.0), count / (time.perf_counter() - start))
    await raw.aclose()
    return out


def e2e_texts(count: int) -> list[str]:
    """``count`` LoCoMo turns, the 2,760 repeated: repeats get a word suffix (no digits,
    which the scorer would count as a signal), so the filters see what real turns look like."""
    base = locomo_turns()
    words = ["alpha", "bravo", "delta", "echo", "kilo", "lima", "oscar", "tango"]
    return [
        base[n % len(base)]
        + "".join(f" {words[(n // len(base) + k) % 8]}" for k in range(n // len(base)))
        for n in range(count)
    ]


def _worker_env(settings: Settings) -> dict[str, str]:
    return {**os.environ, **settings.to_env()}


async def end_to_end(url: str, texts: list[str], embedder: str, workers: int) -> dict[str, float]:
    """Processed memories/s with ``workers`` worker processes draining a full stream."""
    settings = _settings(url, embedder)
    async with AsyncMemoryClient(settings) as client:
        for first in range(0, len(texts), BATCH):
            await client.write_many([{"content": t} for t in texts[first : first + BATCH]])
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "hindsight_redis.cli", "worker", "--burst"],
                env=_worker_env(settings),
                stdout=subprocess.DEVNULL,
            )
            for _ in range(workers)
        ]
        t0 = p0 = None
        while True:
            # The counter alone: stats() (index counts, XINFO...) 100 times a second
            # would take a share of Redis from the workers.
            processed = int(await client.redis.hget(client.keys.stats, "processed") or 0)
            if t0 is None and processed > 0:
                t0, p0 = time.perf_counter(), processed
            if processed >= len(texts):
                break
            await asyncio.sleep(0.01)
        elapsed = time.perf_counter() - (t0 or 0)
        stats = await client.stats()
        # The stream is drained; the workers are now adding contextual vectors
        # in the background (minutes for 20,000 memories): stop them.
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait()
        rate = (len(texts) - (p0 or 0)) / elapsed
        return {
            "rate": rate,
            "indexed": stats["indexed"],
            "merged": stats["merged"],
            "dropped": stats["dropped"]["total"],
        }


async def raw_index_rate(url: str, texts: list[str], embedder: str) -> float:
    """Memories/s of pipelined ``HSET``s of the same documents straight into an index like
    the workers' (vectors and documents prepared beforehand, batches of 500): the ceiling,
    what Redis alone takes to index them."""
    settings = _settings(url, embedder)
    model = embedder_from_settings(settings)
    redis = aioredis.Redis.from_url(url)
    keys = Keys(settings.key_prefix, settings.namespace)
    info = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).ensure(model, contextual_from_settings(settings))
    vectors = await model.embed(texts)
    docs: list[tuple[str, dict[Any, Any]]] = []
    for text, vector in zip(texts, vectors, strict=True):
        event = build_event("bench", {"content": text}, max_content_chars=32_000, max_tags=32)
        candidate = Candidate("0-0", event, text, embedding=vector)
        doc = doc_from_candidate(
            candidate,
            vector_field=info.vector_field,
            vector_datatype=info.datatype,
            contextual=info.has_context,
        )
        docs.append((keys.doc(event.event_id), doc))
    start = time.perf_counter()
    for first in range(0, len(docs), BATCH):
        pipe = redis.pipeline(transaction=False)
        for key, fields in docs[first : first + BATCH]:
            pipe.hset(key, mapping=fields)
        await pipe.execute()
    rate = len(docs) / (time.perf_counter() - start)
    await redis.aclose()
    return rate


async def index_lag(
    url: str, texts: list[str], embedder: str, rate: float, seconds: float
) -> tuple[float, float, int]:
    """p50/p99 seconds from write() to indexed, at a steady ``rate`` writes/s with 2 workers."""
    settings = _settings(url, embedder)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "hindsight_redis.cli", "worker"],
            env=_worker_env(settings),
            stdout=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    lags: list[float] = []
    try:
        async with AsyncMemoryClient(settings) as client:
            await client.write(
                "warm-up: the workers load their embedder before the clock starts",
                wait=True,
                timeout_s=120,
            )
            ids = []
            start = time.perf_counter()
            n = 0
            while (elapsed := time.perf_counter() - start) < seconds:
                due = int(elapsed * rate)
                while n < due:
                    ids.append((await client.write(texts[n % len(texts)] + f" (#{n})")).id)
                    n += 1
                await asyncio.sleep(0.002)
            while (await client.stats())["backlog"] > 0:
                await asyncio.sleep(0.05)
            pipe = client.redis.pipeline(transaction=False)
            for memory_id in ids:
                pipe.hmget(client.keys.doc(memory_id), ["created_at", "indexed_at"])
            for created, indexed in await pipe.execute():
                if created and indexed:
                    lags.append(float(indexed) - float(created))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    return percentile(lags, 50), percentile(lags, 99), len(lags)


async def embedder_alone(texts: list[str], embedder_name: str, batch: int) -> float:
    """Texts/s of the embedder itself, in the worker's batch size, one process."""
    embedder = embedder_from_settings(Settings(embedder=embedder_name))
    await embedder.embed(texts[:batch])  # load the model first
    start = time.perf_counter()
    for first in range(0, len(texts), batch):
        await embedder.embed(texts[first : first + batch])
    return len(texts) / (time.perf_counter() - start)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--embedder", default="local")
    args = parser.parse_args()
    n_single, n_batch, n_e2e = (2_000, 20_000, 5_000) if args.quick else (10_000, 100_000, 20_000)
    base = locomo_turns()
    texts = e2e_texts(max(n_e2e, len(base)))
    with embedded_redis() as url:
        writes = await write_throughput(url, base, n_single, n_batch)
        print("\n## Write throughput (writes/s, one asyncio client)")
        print("| path | writes/s | vs raw |")
        print("|---|---:|---:|")
        for name, value in writes.items():
            raw = (
                writes["raw XADD (single)"]
                if "single" in name or name == "write()"
                else writes["raw XADD (pipelined 500)"]
            )
            print(f"| {name} | {value:,.0f} | {value / raw:.0%} |")
        alone = await embedder_alone(texts[:n_e2e], args.embedder, Settings().worker_batch_size)
        ceiling = await raw_index_rate(url, texts[:n_e2e], args.embedder)
        one = await end_to_end(url, texts[:n_e2e], args.embedder, 1)
        two = await end_to_end(url, texts[:n_e2e], args.embedder, 2)
        print(
            f"\n## End to end ({n_e2e:,} LoCoMo-derived writes, "
            f"embedder {args.embedder!r}, filters on)"
        )
        print("| setup | memories/s | vs embedder alone | vs raw HSET + HNSW |")
        print("|---|---:|---:|---:|")
        print(f"| embedder alone (1 process) | {alone:,.0f} | 100% | |")
        print(f"| raw HSET + HNSW insert (pipelined 500) | {ceiling:,.0f} | | 100% |")
        for name, run in (("1 worker", one), ("2 workers", two)):
            rate = run["rate"]
            print(f"| {name} | {rate:,.0f} | {rate / alone:.0%} | {rate / ceiling:.0%} |")
        print(
            f"outcomes (2 workers): indexed {two['indexed']:,.0f}, "
            f"merged {two['merged']:,.0f}, dropped {two['dropped']:,.0f}"
        )
        lag_rate = max(50.0, min(two["rate"] * 0.5, 2_000.0))
        p50, p99, count = await index_lag(
            url, base, args.embedder, lag_rate, 5.0 if args.quick else 10.0
        )
        print(f"\n## Index lag at {lag_rate:,.0f} writes/s, 2 workers ({count:,} indexed)")
        print(f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
