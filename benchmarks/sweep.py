"""Forgetting at 100,000 memories: a sweep down to 50,000 beside a searcher; export, import.

A namespace of ``--memories`` (default 100,000) LoCoMo-vocabulary memories with
both vectors (static ones from the local model; the contextual field filled
with stand-ins, as in search_latency.py), ages spread over a year, access
counts from a long-tailed distribution, 1% protected. Then, through the public
client:

1. a searcher process (hybrid search, LoCoMo questions, one at a time) runs
   alone for ``--window-s`` seconds: its latencies with no sweep;
2. the same searcher runs while ``client.sweep(max_active=N/2)`` archives half
   the namespace: wall time, memories archived per second, and the searcher's
   worst and p99 latency beside the first window's (ratios, same run);
3. ``client.export(status="all")`` of every memory, then ``import_file`` of
   that file into a fresh namespace (same models: vectors reused), and
   ``purge_exported`` of the archived half from a second export: memories/s.

Run:  python benchmarks/sweep.py [--memories 100000] [--window-s 30] [--redis-share 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.index import IndexInfo, MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent
from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings

from common import embedded_redis, percentile, queue_memory
from search_latency import LocomoCorpus

DAY = 86_400.0
TASKS = ["dialogue", "dialogue", "dialogue", "preference", "fact", ""]


async def populate(settings: Settings, n: int) -> None:
    """``n`` memories straight into the index (bypassing the worker), in batches of 1,000."""
    redis = Redis.from_url(settings.redis_url or "")
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = embedder_from_settings(settings)
    info: IndexInfo = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).ensure(embedder, contextual_from_settings(settings))
    corpus, rng = LocomoCorpus(), random.Random(5)
    now = time.time()
    for start in range(0, n, 1000):
        texts = [corpus.text(rng) for _ in range(min(1000, n - start))]
        vectors = await embedder.embed(texts)
        async with redis.pipeline(transaction=False) as pipe:
            for i, (content, vec) in enumerate(zip(texts, vectors, strict=True)):
                created = now - rng.random() * 365 * DAY
                reads = int(rng.paretovariate(1.2)) - 1 if rng.random() < 0.4 else 0
                last = created + rng.random() * (now - created) if reads else created
                event = MemoryEvent(
                    event_id=f"m{start + i}", namespace=keys.namespace, content=content,
                    task_type=rng.choice(TASKS), created_at=created,
                    protected=rng.random() < 0.01,
                )  # fmt: skip
                ctx = np.zeros(info.context_dims, dtype=np.float32)
                ctx[: min(len(vec), info.context_dims)] = vec[: info.context_dims]
                extra = {
                    "access_count": str(reads),
                    "last_accessed_at": f"{last:.6f}",
                    "write_score": f"{0.6 + rng.random() * 0.4:.4f}",
                }
                queue_memory(pipe, keys, info, event, vec, ctx, extra)
            await pipe.execute()
        if start % 20_000 == 0:
            print(f"  {start + len(texts):,} memories written", file=sys.stderr)
    await redis.aclose()


def searcher(settings_json: str, ready: Any, stop: Any, out: Any) -> None:
    """Hybrid searches one at a time until ``stop``; (wall-clock start, ms) pairs to ``out``."""

    async def run() -> list[tuple[float, float]]:
        settings = Settings.model_validate_json(settings_json)
        corpus, rng = LocomoCorpus(), random.Random(9)
        timings: list[tuple[float, float]] = []
        async with AsyncMemoryClient(settings) as client:
            for q in [corpus.query(rng) for _ in range(30)]:  # warm-up: models, connections
                await client.search(q)
            ready.set()
            while not stop.is_set():
                query = corpus.query(rng)
                started, t0 = time.time(), time.perf_counter()
                await client.search(query)
                timings.append((started, (time.perf_counter() - t0) * 1000))
        return timings

    out.put(asyncio.run(run()))


def _summary(timings: list[tuple[float, float]], start: float, end: float) -> dict[str, float]:
    latencies = [ms for t, ms in timings if start <= t <= end]
    return {
        "searches": len(latencies),
        "p50_ms": round(percentile(latencies, 50), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
    }


async def main(n: int, window_s: float, redis_share: float = 0.5) -> None:
    with embedded_redis() as url, tempfile.TemporaryDirectory(prefix="hs-sweep-") as tmp:
        settings = Settings(
            redis_url=url, key_prefix=f"sw{uuid.uuid4().hex[:6]}", namespace="bench",
            profile="ephemeral", embedder="local", sweep_redis_share=redis_share,
        )  # fmt: skip
        t0 = time.perf_counter()
        await populate(settings, n)
        print(f"{n:,} memories indexed in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        results: dict[str, Any] = {"memories": n, "sweep_redis_share": redis_share}

        context = multiprocessing.get_context("spawn")
        ready, stop, out = context.Event(), context.Event(), context.Queue()
        proc = context.Process(target=searcher, args=(settings.model_dump_json(), ready, stop, out))
        proc.start()
        ready.wait()
        quiet_start = time.time()
        await asyncio.sleep(window_s)
        quiet_end = time.time()
        async with AsyncMemoryClient(settings) as client:
            sweep_start, t0 = time.time(), time.perf_counter()
            report = await client.sweep(max_active=n // 2, show=0)
            sweep_s, sweep_end = time.perf_counter() - t0, time.time()
            stop.set()
            timings = out.get()
            proc.join()
            alone = _summary(timings, quiet_start, quiet_end)
            during = _summary(timings, sweep_start, sweep_end)
            results["search_alone"] = alone
            results["search_during_sweep"] = during
            results["ratio_during_vs_alone"] = {
                k: round(during[k] / alone[k], 2) for k in ("p50_ms", "p99_ms", "max_ms")
            }
            results["sweep"] = {
                "archived": report.archived,
                "kept_changed": report.kept_changed,
                "active_after": report.active_after,
                "wall_s": round(sweep_s, 1),
                "archived_per_s": round(report.archived / sweep_s),
            }
            print(json.dumps(results, indent=2), file=sys.stderr)

            everything = Path(tmp) / "all.jsonl.gz"
            exported = await client.export(everything, status="all")
            results["export_all"] = {
                "memories": exported.count,
                "mb": round(exported.bytes / 1e6, 1),
                "wall_s": exported.elapsed_s,
                "per_s": round(exported.count / exported.elapsed_s),
            }
            archived = Path(tmp) / "archived.jsonl.gz"
            cold = await client.export(archived)
            purged = await client.purge_exported(archived)
            results["purge_archived"] = {
                "removed": purged.removed,
                "wall_s": purged.elapsed_s,
                "per_s": round(purged.removed / purged.elapsed_s),
                "export_wall_s": cold.elapsed_s,
            }
        target = settings.model_copy(update={"namespace": "restored"})
        async with AsyncMemoryClient(target) as restored:
            imported = await restored.import_file(everything)
        results["import_all"] = {
            "imported": imported.imported,
            "reembedded": imported.reembedded,
            "wall_s": imported.elapsed_s,
            "per_s": round(imported.imported / imported.elapsed_s),
        }
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--window-s", type=float, default=30.0)
    parser.add_argument("--redis-share", type=float, default=0.5, help="sweep_redis_share")
    args = parser.parse_args()
    asyncio.run(main(args.memories, args.window_s, args.redis_share))
