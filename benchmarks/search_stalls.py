"""Why some searches are slow: the machine runs the same work slower for a while.

First, with nothing else running, a fixed piece of Python work (``PROBE``,
about 0.4 ms) is timed back to back for ``--seconds``: the share of 100 ms
windows in which it ran at least 1.5 times slower than its median, and the
spacing of those windows. Then the held-out LoCoMo questions (conversations
3-4) are asked ``--rounds`` times in hybrid mode through the public client
(``--direct`` ingest of the dev file, as ``locomo_recall.py --direct``), the
same probe timed right before and right after each search: for slow
(> ``--slow-ms``), middle and fast (< ``--fast-ms``) searches, how much slower
than usual the probe ran beside them. A probe that runs slower beside the slow
searches means the machine was slow then, not the search's own work.

Run:  python benchmarks/search_stalls.py [--rounds 3] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_recall import held_out_questions, ingest_direct, load_turns

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.settings import Settings

from common import embedded_redis, locomo_path

WINDOW_S = 0.1
SLOWER = 1.5
"""A window (or a probe) is slow at this many times the median probe or more."""


def probe() -> float:
    """Milliseconds to run a fixed piece of pure-Python work (about 0.4 ms here)."""
    start = time.perf_counter()
    sum(range(20_000))
    return (time.perf_counter() - start) * 1e3


def alone(seconds: float) -> None:
    """The probe back to back: its slow 100 ms windows and their spacing."""
    times, took = [], []
    start = time.perf_counter()
    while (now := time.perf_counter()) - start < seconds:
        times.append(now - start)
        took.append(probe())
    window = (np.array(times) / WINDOW_S).astype(int)
    lat = np.array(took)
    median = np.median(lat)
    slowdown = np.array([lat[window == w].mean() / median for w in range(window.max())])
    slow = np.flatnonzero(slowdown >= SLOWER)
    starts = slow[np.insert(np.diff(slow) > 1, 0, True)] * WINDOW_S if slow.size else slow
    gaps = np.diff(starts)
    spacing = f", {np.median(gaps):.2f} s apart (median)" if gaps.size else ""
    print(
        f"probe alone, {seconds:g} s: median {median:.3f} ms; {slow.size} of {slowdown.size} "
        f"windows of {WINDOW_S * 1e3:g} ms ran >= {SLOWER:g}x slower (worst "
        f"{slowdown.max():.1f}x), in {starts.size} episodes{spacing}\n"
    )


async def searches(url: str, rounds: int) -> list[tuple[float, float]]:
    """(latency ms, the probes' slowdown beside it) of every search."""
    data = json.loads(locomo_path().read_text())
    settings = Settings(
        redis_url=url,
        key_prefix="st" + uuid.uuid4().hex[:6],
        namespace="locomo",
        profile="ephemeral",
        max_backlog=1_000_000,
    )
    await ingest_direct(settings, load_turns(data), 2)
    questions = held_out_questions(data)
    rows: list[tuple[float, float]] = []
    async with AsyncMemoryClient(settings) as client:
        for question, sample in questions[:50]:  # warm the models and the connection
            await client.search(question, top_k=10, session_id=sample)
        for _ in range(rounds):
            for question, sample in questions:
                before = probe()
                start = time.perf_counter()
                await client.search(question, top_k=10, session_id=sample)
                took = (time.perf_counter() - start) * 1e3
                rows.append((took, max(before, probe())))
    median = float(np.median([p for _, p in rows]))
    return [(took, p / median) for took, p in rows]


def report(rows: list[tuple[float, float]], slow: float, fast: float) -> None:
    """How much slower the probe ran beside slow, middle and fast searches."""
    lat = np.array([ms for ms, _ in rows])
    p50, p99 = np.percentile(lat, [50, 99])
    print(f"hybrid, {len(rows)} searches: p50 {p50:.2f} ms, p99 {p99:.2f} ms\n")
    print(
        f"| searches | n | mean ms | probe beside them (x median), median | share >= {SLOWER:g}x |"
    )
    print("|---|---:|---:|---:|---:|")
    classes = (
        (f"slow (> {slow:g} ms)", lambda ms: ms > slow),
        (f"middle ({fast:g}-{slow:g} ms)", lambda ms: fast <= ms <= slow),
        (f"fast (< {fast:g} ms)", lambda ms: ms < fast),
    )
    for label, keep in classes:
        group = [(ms, p) for ms, p in rows if keep(ms)]
        if group:
            beside = np.array([p for _, p in group])
            print(
                f"| {label} | {len(group)} | {np.mean([ms for ms, _ in group]):.1f} "
                f"| {np.median(beside):.2f} | {(beside >= SLOWER).mean():.2f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--slow-ms", type=float, default=20.0)
    parser.add_argument("--fast-ms", type=float, default=9.0)
    args = parser.parse_args()
    alone(args.seconds)
    with embedded_redis() as url:
        rows = asyncio.run(searches(url, args.rounds))
    report(rows, args.slow_ms, args.fast_ms)


if __name__ == "__main__":
    main()
