"""Forgetting at 100,000 memories: a sweep down to half beside a searcher; export, import.

A namespace of ``--memories`` LoCoMo-vocabulary memories with both vectors (static ones from
the local model; the contextual field filled with stand-ins), ages spread over a year, access
counts from a long-tailed distribution, 1% protected. Then, through the public client:

1. a searcher process (hybrid search, LoCoMo questions, one at a time) runs alone for
   ``--window-s`` seconds: its latencies with no sweep, the baseline;
2. the same searcher runs while ``client.sweep(max_active=N/2)`` archives half the
   namespace: wall time, memories archived per second, and the searcher's p50, p99 and worst
   latency against the first window's (ratios, same run);
3. ``client.export(status="all")`` of every memory, ``import_file`` of that file into a
   fresh namespace (same models: vectors reused), and ``purge_exported`` of the archived
   half from a second export: memories/s.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from benchmarks import locomo
from benchmarks.harness import DirectIndex, bench_settings, embedded_redis
from benchmarks.measure import percentile, ratio
from hindsight_redis import AsyncMemoryClient, Settings

SUMMARY = "a sweep of 100k memories down to 50k: archived/s, search beside it vs alone; export"
DAY = 86_400.0
TASKS = ["dialogue", "dialogue", "dialogue", "preference", "fact", ""]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--memories", type=int, help="default 100,000 (quick 4,000)")
    parser.add_argument("--window-s", type=float, help="search alone (default 30 s; quick 3)")
    parser.add_argument("--redis-share", type=float, default=0.5, help="sweep_redis_share")


async def populate(settings: Settings, n: int) -> None:
    """``n`` memories straight into the index (no worker), in batches of 1,000."""
    sentences, rng, now = locomo.Sentences(), random.Random(5), time.time()
    memories, extras = [], []
    for i in range(n):
        created = now - rng.random() * 365 * DAY
        reads = int(rng.paretovariate(1.2)) - 1 if rng.random() < 0.4 else 0
        last = created + rng.random() * (now - created) if reads else created
        memories.append(
            {
                "event_id": f"m{i}",
                "content": sentences.text(rng),
                "task_type": rng.choice(TASKS),
                "created_at": created,
                "protected": rng.random() < 0.01,
            }
        )
        extras.append(
            {
                "access_count": str(reads),
                "last_accessed_at": f"{last:.6f}",
                "write_score": f"{0.6 + rng.random() * 0.4:.4f}",
            }
        )
    redis = Redis.from_url(settings.redis_url or "")
    try:
        await (await DirectIndex.open(redis, settings)).add(
            memories, context="stand-in", extras=extras
        )
    finally:
        await redis.aclose()


def searcher(settings_json: str, ready: Any, stop: Any, out: Any) -> None:
    """Hybrid searches one at a time until ``stop``; (wall-clock start, ms) pairs to ``out``."""

    async def run() -> list[tuple[float, float]]:
        settings = Settings.model_validate_json(settings_json)
        corpus, rng = locomo.Sentences(), random.Random(9)
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
        "max_ms": round(max(latencies, default=float("nan")), 2),
    }


async def measure(n: int, window_s: float, redis_share: float) -> dict[str, Any]:
    with embedded_redis() as url, tempfile.TemporaryDirectory(prefix="hs-sweep-") as tmp:
        settings = bench_settings(url, sweep_redis_share=redis_share)
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
            results["during_vs_alone"] = {
                k: ratio(during[k], alone[k]) for k in ("p50_ms", "p99_ms", "max_ms")
            }
            results["sweep"] = {
                "archived": report.archived,
                "kept_changed": report.kept_changed,
                "active_after": report.active_after,
                "wall_s": round(sweep_s, 1),
                "archived_per_s": round(report.archived / sweep_s),
            }

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
        return results


def run(args: argparse.Namespace) -> dict[str, Any]:
    n = args.memories or (4_000 if args.quick else 100_000)
    window_s = args.window_s or (3.0 if args.quick else 30.0)
    results = asyncio.run(measure(n, window_s, args.redis_share))
    alone, during, ratios = (
        results[k] for k in ("search_alone", "search_during_sweep", "during_vs_alone")
    )
    print("\n| | searches | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|")
    print(
        f"| search alone | {alone['searches']:,} | {alone['p50_ms']} | {alone['p99_ms']} | "
        f"{alone['max_ms']} |"
    )
    print(
        f"| search during the sweep | {during['searches']:,} | {during['p50_ms']} "
        f"(x{ratios['p50_ms']:.2f}) | {during['p99_ms']} (x{ratios['p99_ms']:.2f}) | "
        f"{during['max_ms']} (x{ratios['max_ms']:.2f}) |"
    )
    sweep = results["sweep"]
    print(
        f"\nsweep: {sweep['archived']:,} archived in {sweep['wall_s']} s "
        f"({sweep['archived_per_s']}/s), {sweep['kept_changed']:,} kept (read meanwhile)"
    )
    for step in ("export_all", "purge_archived", "import_all"):
        print(f"{step}: {results[step]['per_s']:,} memories/s")
    return results
