"""Many tenants: 200 namespaces served by 2 ``worker --all-namespaces`` processes, against one
namespace (the baseline) served by 2 ``worker`` processes.

One embedded Redis, the same texts and the same rate for both setups, in the same run:

1. drain: ``--writes`` LoCoMo-derived writes (as in ``ingest``), written first, then drained
   by 2 burst workers: spread over ``--namespaces`` namespaces (turn k and its repeats go to
   namespace k mod N, so near-duplicates meet as they do in one namespace) against all in one
   namespace. Memories/s from the first processed write to the last.
2. lag: a steady rate of ``write()`` calls for ``--seconds``, round-robin over the namespaces
   against all into one; p50/p99 of ``indexed_at - created_at`` per memory.

Each setup runs ``--rounds`` times, alternating, and keeps its best run; the workers' CPU time
per memory (``getrusage`` of the exited workers, model loading and refining included) says
the same as the rates on a machine too busy for clean wall-clock figures.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from redis.asyncio import Redis

from benchmarks import locomo
from benchmarks.harness import WORKERS, bench_settings, drain, embedded_redis, index_lag
from benchmarks.measure import ratio
from hindsight_redis import AsyncMemoryClient, Settings

SUMMARY = "200 namespaces on 2 workers vs one namespace: drain memories/s, index lag"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespaces", type=int, help="default 200 (quick 20)")
    parser.add_argument("--writes", type=int, help="drain size (default 20,000; quick 2,000)")
    parser.add_argument("--seconds", type=float, help="lag window (default 10; quick 3)")
    parser.add_argument("--rate", type=float, help="lag writes/s (default: half the drain rate)")
    parser.add_argument("--rounds", type=int, help="alternating runs, best kept (2; quick 1)")
    parser.add_argument("--embedder", default="local")


def namespaces(settings: Settings, tenants: int) -> list[str]:
    """The setup's namespaces: ``tenants`` of them, or the settings' one."""
    return [f"t{n:04d}" for n in range(tenants)] if tenants > 1 else [settings.namespace]


async def drain_setup(url: str, texts: list[str], embedder: str, tenants: int) -> dict[str, float]:
    """Memories/s of 2 burst workers over ``texts`` written first to ``tenants`` namespaces;
    text ``n`` repeats turn ``n % turns`` and goes where that turn went."""
    settings = bench_settings(url, embedder=embedder)
    names, turns = namespaces(settings, tenants), len(locomo.texts())
    redis = Redis.from_url(url)
    mine: dict[str, list[str]] = {n: [] for n in names}
    for n, text in enumerate(texts):
        mine[names[(n % turns) % len(names)]].append(text)
    for name, own in mine.items():
        async with AsyncMemoryClient(
            settings.model_copy(update={"namespace": name}), redis=redis
        ) as client:
            for first in range(0, len(own), 500):
                await client.write_many([{"content": t} for t in own[first : first + 500]])
    result = await drain(redis, settings, names, len(texts))
    await redis.aclose()
    return result


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    count = args.writes or (2_000 if args.quick else 20_000)
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    tenants = args.namespaces or (20 if args.quick else 200)
    rounds = args.rounds or (1 if args.quick else 2)
    base, texts = locomo.texts(), locomo.derived_texts(count)
    setups = {"1 namespace": 1, f"{tenants} namespaces": tenants}
    drains: dict[str, dict[str, float]] = {}
    lags: dict[str, dict[str, float]] = {}
    with embedded_redis() as url:
        for _ in range(rounds):  # alternating, each keeping its best: like with like
            for label, n in setups.items():
                one = await drain_setup(url, texts, args.embedder, n)
                drains[label] = max(drains.get(label, one), one, key=lambda r: r["rate"])
        rate = args.rate or max(50.0, min(0.5 * min(r["rate"] for r in drains.values()), 2_000.0))
        for _ in range(rounds):
            for label, n in setups.items():
                settings = bench_settings(url, embedder=args.embedder)
                one = await index_lag(settings, namespaces(settings, n), base, rate, seconds)
                lags[label] = min(lags.get(label, one), one, key=lambda r: r["p99_ms"])
    spread = f"{tenants} namespaces"
    return {
        "writes": count,
        "drain": drains,
        "drain_vs_one_namespace": ratio(drains[spread]["rate"], drains["1 namespace"]["rate"]),
        "index_lag": lags,
        "lag_p99_vs_one_namespace": ratio(lags[spread]["p99_ms"], lags["1 namespace"]["p99_ms"]),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures = asyncio.run(measure(args))
    drains, lags = figures["drain"], figures["index_lag"]
    one = drains["1 namespace"]["rate"]
    print(f"\n## Drain: {figures['writes']:,} writes, {WORKERS} worker processes\n")
    print("| setup | memories/s | vs one namespace | worker CPU ms/memory |\n|---|---:|---:|---:|")
    for label, d in drains.items():
        print(f"| {label} | {d['rate']:,.0f} | {ratio(d['rate'], one):.0%} | {d['cpu_ms']:.2f} |")
    lag_one = lags["1 namespace"]["p99_ms"]
    rate = next(iter(lags.values()))["rate"]
    print(f"\n## Index lag at {rate:,.0f} writes/s, {WORKERS} workers\n")
    print("| setup | p50 ms | p99 ms | p99 vs one namespace | memories | worker CPU ms/memory |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, lag in lags.items():
        print(
            f"| {label} | {lag['p50_ms']:.1f} | {lag['p99_ms']:.1f} | "
            f"{ratio(lag['p99_ms'], lag_one):.2f}x | {lag['memories']:,.0f} | "
            f"{lag['cpu_ms']:.2f} |"
        )
    return figures
