"""Fresh memories under load: recall of questions asked 1, 10 and 60 s after their answer was
written, while writes keep coming, against recall of the same questions at rest.

The LoCoMo conversations are written at a steady ``--rate`` (200 writes/s), in order, as an
agent records a transcript (``write_many`` every 50 ms with the writes due, ``occurred_at``,
``context_from_previous=2``: benchmarks/recall.py's items), while ``--workers`` worker
processes run (role ``all``, ``refine_share`` from ``--share``; ``--refiners`` adds
processes of role ``refine``). A question becomes askable once the last turn it cites was
written; it is asked once, at one of the ``--delays`` after that (the questions dealt to
the delays in turn, so each delay gets a like share of every conversation and category),
by a searcher beside the writer (hybrid, ``top_k=10``, its conversation's session). Once
every write is processed and every memory refined ("at rest"), every question is asked
again. Reported: recall@10 of each delay's questions then and at rest (all, dev, held-out,
per category), how long the pool took to reach rest after the last write, the write rate
achieved, index lag (write to searchable) percentiles, and the refine backlog and its age
sampled every second.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from benchmarks import locomo
from benchmarks.harness import embedded_redis, start_workers, stop_workers
from benchmarks.measure import percentile
from benchmarks.recall import CONTEXT_TURNS, write_items
from hindsight_redis import AsyncMemoryClient, Settings

SUMMARY = "recall@10 of questions asked 1/10/60 s after their answer was written, under load"
TICK_S = 0.05
SEARCHERS = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rate", type=float, default=200.0, help="writes/s (default 200)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--refiners", type=int, default=0, help="extra --role refine processes")
    parser.add_argument(
        "--share", type=float, default=Settings().refine_share, help="the workers' refine_share"
    )
    parser.add_argument(
        "--role",
        default="all",
        choices=["all", "ingest"],
        help="the workers' (ingest: no refining)",
    )
    parser.add_argument("--delays", default="1,10,60", help="seconds after the answer, a,b,c")
    parser.add_argument("--conversations", type=int, help="the first N (default all; quick 1)")


@dataclass
class Asked:
    """Recall@10 of each question at each delay (and at rest), with the delay achieved."""

    rows: dict[str, list[tuple[locomo.Question, float]]] = field(default_factory=dict)
    late_s: list[float] = field(default_factory=list)

    def add(self, label: str, question: locomo.Question, recall: float) -> None:
        self.rows.setdefault(label, []).append((question, recall))

    def summary(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for label, rows in self.rows.items():
            groups: dict[str, list[float]] = {}
            for q, r in rows:
                for g in (
                    "all",
                    "held_out" if q.held_out else "dev",
                    locomo.CATEGORIES[q.category],
                ):
                    groups.setdefault(g, []).append(r)
            out[label] = {g: sum(v) / len(v) for g, v in groups.items()}
            out[label]["questions"] = len(rows)
        return out


async def ask(client: AsyncMemoryClient, q: locomo.Question) -> float:
    """Recall@10 of one question, through the public path."""
    hits = await client.search(q.text, top_k=10, mode="hybrid", session_id=q.conversation)
    return len(q.evidence & {h.source for h in hits}) / len(q.evidence)


async def sample(client: AsyncMemoryClient, t0: float, out: list[dict[str, float]]) -> None:
    """Every second: backlog, refine backlog and its age."""
    while True:
        stats = await client.stats()
        out.append(
            {
                "t_s": round(time.perf_counter() - t0, 1),
                "backlog": stats["backlog"],
                "refine_pending": stats["refine_pending"] or 0,
                "refine_lag_s": round(stats["refine_lag_s"], 2),
            }
        )
        await asyncio.sleep(1.0)


class Rest:
    """Watches for the pool to be at rest once the writes ended: every write processed and
    every memory refined with the exact model (``refining``; else processed only)."""

    def __init__(self, client: AsyncMemoryClient, *, refining: bool) -> None:
        self.client = client
        self.refining = refining
        self.task: asyncio.Task[float] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._watch())

    async def _watch(self) -> float:
        while True:
            stats = await self.client.stats()
            refined = stats["refine_pending"] == 0 and not stats["refine_drafts"]
            if stats["backlog"] == 0 and (not self.refining or refined):
                return time.perf_counter()
            await asyncio.sleep(0.2)

    async def wait(self, since: float) -> float:
        """Seconds from ``since`` to rest."""
        assert self.task is not None
        return await self.task - since


async def index_lags(redis: Redis, client: AsyncMemoryClient) -> list[float]:
    """``indexed_at - created_at`` of every memory of the namespace."""
    lags: list[float] = []
    async for key in redis.scan_iter(match=client.keys.doc("*"), count=1000):
        created, indexed = await redis.hmget(key, ["created_at", "indexed_at"])
        if created and indexed:
            lags.append(float(indexed) - float(created))
    return lags


async def measure(args: argparse.Namespace, url: str) -> dict[str, Any]:
    data = locomo.load()[: args.conversations]
    turns, questions = locomo.turns(data), locomo.questions(data)
    delays = [float(d) for d in args.delays.split(",")]
    settings = Settings(
        redis_url=url,
        key_prefix=f"fresh{uuid.uuid4().hex[:6]}",
        namespace="locomo",
        profile="ephemeral",
        max_backlog=1_000_000,
        refine_share=args.share,
    )
    items = write_items(turns)
    position = {(t.conversation, t.dia_id): n for n, t in enumerate(turns)}
    last_cited: dict[locomo.Question, int] = {}
    for q in questions:
        cited = [
            position[(q.conversation, d)] for d in q.evidence if (q.conversation, d) in position
        ]
        if cited:
            last_cited[q] = max(cited)
    by_turn: dict[int, list[locomo.Question]] = {}
    for q, n in last_cited.items():
        by_turn.setdefault(n, []).append(q)
    asked, samples = Asked(), list[dict[str, float]]()
    redis = Redis.from_url(url)
    async with AsyncMemoryClient(settings) as writer, AsyncMemoryClient(settings) as searcher:
        await writer.write("warm-up: the workers load their models")
        procs = start_workers(settings, args.workers, "--role", args.role)
        procs += start_workers(settings, args.refiners, "--role", "refine")
        try:
            while True:  # the workers have loaded their models (and refined, when they do)
                stats = await writer.stats()
                refined = args.role == "ingest" or stats["refine_pending"] == 0
                if stats["processed"] >= 1 and refined:
                    break
                await asyncio.sleep(0.2)
            await searcher.search("warm-up", top_k=1)
            due: list[tuple[float, int, str, locomo.Question]] = []
            slots = asyncio.Semaphore(SEARCHERS)
            searches: set[asyncio.Task[None]] = set()

            async def timed_ask(when: float, label: str, q: locomo.Question) -> None:
                async with slots:  # a few searchers: they overlap their round trips
                    asked.late_s.append(time.perf_counter() - when)
                    asked.add(label, q, await ask(searcher, q))

            order = 0
            written = 0
            t0 = time.perf_counter()
            sampler = asyncio.create_task(sample(searcher, t0, samples))
            resting = Rest(searcher, refining=args.role == "all" or args.refiners > 0)
            while written < len(items) or due:
                now = time.perf_counter()
                target = min(len(items), int((now - t0) * args.rate))
                if target > written:
                    await writer.write_many(
                        items[written:target], context_from_previous=CONTEXT_TURNS
                    )
                    done_at = time.perf_counter()
                    for n in range(written, target):
                        for q in by_turn.get(n, []):
                            d = delays[order % len(delays)]
                            order += 1
                            heapq.heappush(due, (done_at + d, order, f"{d:g}s", q))
                    written = target
                    if written == len(items):
                        last_write = done_at
                        resting.start()
                while due and due[0][0] <= time.perf_counter():
                    when, _, label, q = heapq.heappop(due)
                    searches.add(asyncio.create_task(timed_ask(when, label, q)))
                    searches = {t for t in searches if not t.done()}
                wait = due[0][0] - time.perf_counter() if due else TICK_S
                await asyncio.sleep(max(0.0, min(TICK_S, wait)))
            await asyncio.gather(*searches)
            achieved = len(items) / (last_write - t0)
            rest_after_s = await resting.wait(last_write)
            sampler.cancel()
            for label, rows in list(asked.rows.items()):
                for q, _ in rows:
                    asked.add(f"{label} rest", q, await ask(searcher, q))
            lags = await index_lags(redis, searcher)
            stats = await searcher.stats()
        finally:
            stop_workers(procs)
            await redis.aclose()
    return {
        "rate": args.rate,
        "achieved_rate": achieved,
        "workers": args.workers,
        "refiners": args.refiners,
        "share": args.share,
        "writes": len(items),
        "indexed": stats["indexed"],
        "rest_after_s": rest_after_s,
        "ask_late_p99_s": percentile(asked.late_s, 99),
        "index_lag_ms": {f"p{p}": percentile(lags, p) * 1000 for p in (50, 90, 99)},
        "recall": (recall := asked.summary()),
        "below_rest_points": {
            label: round((recall[f"{label} rest"]["all"] - row["all"]) * 100, 1)
            for label, row in recall.items()
            if not label.endswith("rest")
        },
        "samples": samples,
    }


def report(figures: dict[str, Any]) -> None:
    recall = figures["recall"]
    labels = sorted(recall, key=lambda k: (float(k.split("s")[0]), k))
    groups = [
        g
        for g in ("all", "dev", "held_out", *locomo.CATEGORIES.values())
        if all(g in row for row in recall.values())
    ]
    print(
        f"\n{figures['writes']} writes at {figures['achieved_rate']:.0f}/s, {figures['workers']} "
        f"workers (share {figures['share']}), {figures['refiners']} refiners; at rest "
        f"{figures['rest_after_s']:.1f} s after the last write; index lag p50/p90/p99 "
        + " / ".join(f"{v:.0f}" for v in figures["index_lag_ms"].values())
        + " ms"
    )
    print("\n| asked | " + " | ".join(f"{g} R@10" for g in groups) + " |")
    print("|---" + "|---:" * len(groups) + "|")
    for label in labels:
        print(f"| {label} | " + " | ".join(f"{recall[label][g]:.3f}" for g in groups) + " |")
    print(
        "\nrecall@10 below the same questions at rest, points: "
        + ", ".join(f"{k} {v:+.1f}" for k, v in figures["below_rest_points"].items())
    )
    peak = max(figures["samples"], key=lambda s: s["refine_pending"], default=None)
    if peak:
        print(
            f"\nrefine backlog peak {peak['refine_pending']:,} at {peak['t_s']} s "
            f"(oldest waiting {max(s['refine_lag_s'] for s in figures['samples']):.1f} s at most)"
        )


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.quick and args.conversations is None:
        args.conversations = 1
    with embedded_redis() as url:
        figures = asyncio.run(measure(args, url))
    report(figures)
    return figures
