"""Many tenants: 200 namespaces served by 2 ``worker --all-namespaces`` processes, beside one.

    python benchmarks/tenants.py               # figures in benchmarks/README.md
    python benchmarks/tenants.py --quick       # smaller sizes

One embedded Redis, the same texts and the same rate for both setups, in the
same run (the ratios compare like with like):

1. drain: ``--writes`` LoCoMo-derived writes (as in ingest.py), written first,
   then drained by 2 worker processes in burst mode: spread over
   ``--namespaces`` namespaces (``worker --all-namespaces --burst``; turn k
   and its repeats go to namespace k mod 200, so near-duplicates meet as they
   do in one namespace) against all in one namespace (``worker --burst``).
   Memories/s from the first processed write to the last.
2. lag: a steady rate of ``write()`` calls for ``--seconds``, round-robin over
   the namespaces (2 ``worker --all-namespaces``) against one namespace
   (2 ``worker``); p50/p99 of ``indexed_at - created_at`` per memory.

Each setup runs ``--rounds`` times, alternating, and keeps its best run; the
workers' CPU time per memory (from ``getrusage`` of the exited worker
processes, model loading and background refining included) says the same
as the rates on a machine too busy for clean wall-clock figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.admin import refine_pending
from hindsight_redis.keys import Keys

from common import embedded_redis, locomo_turns, percentile

WORKERS = 2


def _settings(url: str, embedder: str) -> Settings:
    return Settings(
        redis_url=url, key_prefix=f"b{uuid.uuid4().hex[:8]}", namespace="bench",
        profile="ephemeral", embedder=embedder, max_backlog=10_000_000,
    )  # fmt: skip


def _workers(settings: Settings, *flags: str) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, **settings.to_env()}
    command = [sys.executable, "-m", "hindsight_redis.cli", "worker", *flags]
    return [subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL) for _ in range(WORKERS)]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)  # each finishes its round, acks, exits
    for proc in procs:
        proc.wait()


def _children_cpu_s() -> float:
    """CPU seconds of the worker processes that exited so far (robust to a busy machine)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _namespaces(tenants: int) -> list[str]:
    return [f"t{n:04d}" for n in range(tenants)] if tenants > 1 else ["bench"]


async def _processed(redis: aioredis.Redis, prefix: str, namespaces: Sequence[str]) -> int:
    """Writes processed over all ``namespaces`` (one pipelined round trip)."""
    pipe = redis.pipeline(transaction=False)
    for namespace in namespaces:
        pipe.hget(Keys(prefix, namespace).stats, "processed")
    return sum(int(v or 0) for v in await pipe.execute())


async def _refining(redis: aioredis.Redis, prefix: str, namespaces: Sequence[str]) -> int:
    """Memories still waiting for their contextual vector, over all ``namespaces``."""
    counts = [await refine_pending(redis, Keys(prefix, n)) for n in namespaces]
    return sum(c or 0 for c in counts)


async def drain(
    url: str, texts: list[str], embedder: str, tenants: int, turns: int
) -> dict[str, float]:
    """Memories/s of 2 burst workers over ``texts`` written first to ``tenants`` namespaces.

    Text ``n`` repeats turn ``n % turns``: it goes where that turn went.
    """
    settings = _settings(url, embedder)
    names = _namespaces(tenants)
    redis = aioredis.Redis.from_url(url)
    by_namespace: dict[str, list[str]] = {n: [] for n in names}
    for n, text in enumerate(texts):
        by_namespace[names[(n % turns) % len(names)]].append(text)
    for namespace, mine in by_namespace.items():
        on = settings.model_copy(update={"namespace": namespace})
        async with AsyncMemoryClient(on, redis=redis) as client:
            for first in range(0, len(mine), 500):
                await client.write_many([{"content": t} for t in mine[first : first + 500]])
    flags = ("--all-namespaces", "--burst") if tenants > 1 else ("--burst",)
    cpu_s = _children_cpu_s()
    procs = _workers(settings, *flags)
    t0 = p0 = None
    while True:
        done = await _processed(redis, settings.key_prefix, names)
        if t0 is None and done > 0:
            t0, p0 = time.perf_counter(), done
        if done >= len(texts):
            break
        await asyncio.sleep(0.01)
    elapsed = time.perf_counter() - (t0 or 0.0)
    # Drained; the workers now add contextual vectors in the background: stop them.
    _stop(procs)
    await redis.aclose()
    return {
        "rate": (len(texts) - (p0 or 0)) / elapsed,
        "cpu_ms": (_children_cpu_s() - cpu_s) * 1000 / len(texts),
    }


async def index_lag(
    url: str, texts: list[str], embedder: str, tenants: int, rate: float, seconds: float
) -> dict[str, float]:
    """p50/p99 seconds from write() to indexed at ``rate`` writes/s over ``tenants`` namespaces."""
    settings = _settings(url, embedder)
    names = _namespaces(tenants)
    redis = aioredis.Redis.from_url(url)
    clients = [
        AsyncMemoryClient(settings.model_copy(update={"namespace": n}), redis=redis) for n in names
    ]
    for client in clients:  # registers every namespace before the workers start
        await client.write(f"warm-up of {client.keys.namespace}: workers load their models")
    cpu_s = _children_cpu_s()
    procs = _workers(settings, *(("--all-namespaces",) if tenants > 1 else ()))
    lags: list[float] = []
    try:
        # The clock starts once the workers processed the warm-ups...
        while await _processed(redis, settings.key_prefix, names) < len(names):
            await asyncio.sleep(0.05)
        # ...and their contextual vectors are in (one namespace at a time: 200 steps).
        while await _refining(redis, settings.key_prefix, names):
            await asyncio.sleep(0.1)
        written: list[tuple[Keys, str]] = []
        start = time.perf_counter()
        n = 0
        while (elapsed := time.perf_counter() - start) < seconds:
            while n < int(elapsed * rate):
                client = clients[n % len(clients)]
                receipt = await client.write(texts[n % len(texts)] + f" (#{n})")
                written.append((client.keys, receipt.id))
                n += 1
            await asyncio.sleep(0.002)
        while await _processed(redis, settings.key_prefix, names) < len(names) + n:
            await asyncio.sleep(0.05)
        pipe = redis.pipeline(transaction=False)
        for keys, memory_id in written:
            pipe.hmget(keys.doc(memory_id), ["created_at", "indexed_at"])
        for created, indexed in await pipe.execute():
            if created and indexed:  # merged writes have no document of their own
                lags.append(float(indexed) - float(created))
    finally:
        _stop(procs)
        await redis.aclose()
    return {
        "p50": percentile(lags, 50),
        "p99": percentile(lags, 99),
        "memories": len(lags),
        "cpu_ms": (_children_cpu_s() - cpu_s) * 1000 / len(written),
    }


def _texts(base: list[str], count: int) -> list[str]:
    """As in ingest.py: repeats of the turns get a word suffix (no digits)."""
    words = ["alpha", "bravo", "delta", "echo", "kilo", "lima", "oscar", "tango"]
    return [
        base[n % len(base)]
        + "".join(f" {words[(n // len(base) + k) % 8]}" for k in range(n // len(base)))
        for n in range(count)
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--namespaces", type=int, default=200)
    parser.add_argument("--writes", type=int, help="drain size (default 20,000; quick 5,000)")
    parser.add_argument("--seconds", type=float, help="lag window (default 10; quick 5)")
    parser.add_argument("--rate", type=float, help="lag writes/s (default: half the drain rate)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs, best kept")
    args = parser.parse_args()
    count = args.writes or (5_000 if args.quick else 20_000)
    seconds = args.seconds or (5.0 if args.quick else 10.0)
    base = locomo_turns()
    texts = _texts(base, count)
    tenants = args.namespaces
    setups = ((1, "1 namespace"), (tenants, f"{tenants} namespaces"))
    with embedded_redis() as url:
        # Alternating rounds, each setup keeping its best: on a shared machine
        # that compares like with like.
        drains: dict[int, dict[str, float]] = {}
        for _ in range(args.rounds):
            for n, _label in setups:
                run = await drain(url, texts, args.embedder, n, len(base))
                drains[n] = max(drains.get(n, run), run, key=lambda r: r["rate"])
        print(f"\n## Drain: {count:,} writes, {WORKERS} worker processes (best of {args.rounds})")
        print("| setup | memories/s | vs one namespace | worker CPU ms/memory |")
        print("|---|---:|---:|---:|")
        for n, label in setups:
            flags = "--all-namespaces --burst" if n > 1 else "--burst"
            run, ratio = drains[n], drains[n]["rate"] / drains[1]["rate"]
            print(
                f"| {label} (`worker {flags}`) | {run['rate']:,.0f} | {ratio:.0%} | "
                f"{run['cpu_ms']:.2f} |"
            )
        rate = args.rate or max(50.0, min(0.5 * min(r["rate"] for r in drains.values()), 2_000.0))
        lags: dict[int, dict[str, float]] = {}
        for _ in range(args.rounds):
            for n, _label in setups:
                lag = await index_lag(url, base, args.embedder, n, rate, seconds)
                lags[n] = min(lags.get(n, lag), lag, key=lambda r: r["p99"])
        print(
            f"\n## Index lag at {rate:,.0f} writes/s for {seconds:.0f} s, {WORKERS} workers "
            f"(best p99 of {args.rounds})"
        )
        print(
            "| setup | p50 ms | p99 ms | p99 vs one namespace | memories | worker CPU ms/memory |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for n, label in setups:
            lag, ratio = lags[n], lags[n]["p99"] / lags[1]["p99"]
            print(
                f"| {label} | {lag['p50'] * 1000:.1f} | {lag['p99'] * 1000:.1f} | {ratio:.2f}x | "
                f"{lag['memories']:,.0f} | {lag['cpu_ms']:.2f} |"
            )


if __name__ == "__main__":
    asyncio.run(main())
