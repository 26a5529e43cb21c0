"""LoCoMo retrieval: recall@5 and @10 of vector, keyword and hybrid search, through the public
path, and each mode's search latency.

Every dialogue turn of the dev conversations is written with ``AsyncMemoryClient.write_many``
as an agent records a chat turn: content ``"Speaker: text"``, source = its dia_id, session_id
= the conversation, ``occurred_at`` = the session's date and that date as a tag, each turn's
contextual vector also reading the 2 turns before it (``--context``). A burst ``Worker`` then
runs the real pipeline (rules, write score, summarizer, embed, dedup) and the contextual
refine, so turns the filters drop cannot be found. Each question of categories 1-4 is asked
with ``client.search(question, top_k=10, mode=..., session_id=...)``; recall@k is the share of
its cited turns in the top k, averaged, for all conversations, the dev ones (0-2: parameters
were chosen on them), the held-out ones (3-4), per category, and per category of each. The
vector and keyword modes are hybrid's baselines, measured on the same memories.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from redis.asyncio import Redis

from benchmarks import locomo
from benchmarks.harness import DirectIndex, default_search_redis, embedded_redis
from benchmarks.measure import MODES, percentile, ratio
from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.write.session_tails import SessionTails

SUMMARY = "LoCoMo recall@10 of hybrid vs vector and keyword (public path), search p50 / p99"
CONTEXT_TURNS = 2  # write_many(context_from_previous=...): what a transcript's writer would pass
NONSENSE = [
    "🚀",
    "asdkjh qwpoe zzkx",
    "xyzzy plugh",
    "lorem ipsum dolor sit amet",
    "???",
    "qzxv",
    "the the the",
    "🙂🙂 ok",
]
Scores = dict[str, dict[str, list[tuple[float, float, float]]]]  # mode -> group -> (r5, r10, ms)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = Settings()
    parser.add_argument("--conversations", type=int, help="the first N (default all; quick 1)")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--contextual", default=defaults.contextual_embedder, help="none: off")
    parser.add_argument("--alpha", type=float, default=defaults.hybrid_alpha)
    parser.add_argument("--fusion", default=defaults.hybrid_fusion, choices=["linear", "rrf"])
    parser.add_argument("--candidates", type=int, default=defaults.search_candidates)
    parser.add_argument(
        "--contextual-weight", type=float, default=defaults.hybrid_contextual_weight
    )
    parser.add_argument(
        "--context",
        type=int,
        default=CONTEXT_TURNS,
        metavar="N",
        help=f"contextual vectors also read the N previous turns (default {CONTEXT_TURNS}; 0: off)",
    )
    parser.add_argument(
        "--namespaces",
        action="store_true",
        help="one namespace per conversation, searched without filters",
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="index every turn without the worker (iteration only: no filters)",
    )
    parser.add_argument(
        "--floors",
        help="VECTOR:CONTEXTUAL relevance floors to sweep on one "
        "ingest, e.g. 0:0,0.45:0.3 (hybrid and vector recall, nonsense hits)",
    )
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="on a server whose search module keeps its default GC",
    )


def write_items(turns: list[locomo.Turn]) -> list[dict[str, Any]]:
    """The ``write_many`` items of ``turns``."""
    return [
        {
            "content": t.content,
            "source": t.dia_id,
            "session_id": t.conversation,
            "tags": [t.date],
            "occurred_at": locomo.session_time(t.date),
        }
        for t in turns
    ]


async def ingest_public(
    settings: Settings, turns: list[locomo.Turn], context: int
) -> dict[str, int]:
    """write_many every turn, drain the stream with a burst worker; the worker's counts."""
    items = write_items(turns)
    async with AsyncMemoryClient(settings) as client:
        for start in range(0, len(items), 500):
            await client.write_many(items[start : start + 500], context_from_previous=context)
    report = await Worker(settings).run_async(burst=True)
    return {"indexed": report.indexed, "merged": report.merged, "dropped": report.dropped}


async def ingest_direct(
    settings: Settings, turns: list[locomo.Turn], context: int
) -> dict[str, int]:
    """Index every turn without the worker, in turn order a millisecond apart, as a
    transcript's writes are (no filters: for fast iteration only)."""
    items: Sequence[Mapping[str, Any]] = write_items(turns)
    if context:
        items = SessionTails().fill(items, context, "")[0]
    now = time.time()
    events = [
        {
            "event_id": f"{t.conversation}-{t.dia_id}".replace(":", "_"),
            "created_at": now + n / 1000,
            "tags": tuple(item["tags"]),
            **{k: v for k, v in item.items() if k != "tags"},
        }
        for n, (t, item) in enumerate(zip(turns, items, strict=True))
    ]
    redis = Redis.from_url(settings.redis_url or "")
    try:
        await (await DirectIndex.open(redis, settings)).add(events, batch=256)
    finally:
        await redis.aclose()
    return {"indexed": len(turns), "merged": 0, "dropped": 0}


def _summary(rows: list[tuple[float, float, float]]) -> dict[str, float]:
    times = [ms for _, _, ms in rows]
    return {
        "questions": len(rows),
        "r5": sum(r5 for r5, _, _ in rows) / len(rows),
        "r10": sum(r10 for _, r10, _ in rows) / len(rows),
        "p50_ms": percentile(times, 50),
        "p99_ms": percentile(times, 99),
    }


async def by_conversation(
    settings: Settings, questions: list[locomo.Question], namespaces: bool
) -> AsyncIterator[tuple[AsyncMemoryClient, str | None, list[locomo.Question]]]:
    """Each conversation's questions, a client and the session filter to ask them with: the
    conversation's own namespace (``--namespaces``), or the shared one and its session."""
    for conversation in dict.fromkeys(q.conversation for q in questions):
        own = settings.model_copy(update={"namespace": conversation})
        async with AsyncMemoryClient(own if namespaces else settings) as client:
            asked = [q for q in questions if q.conversation == conversation]
            yield client, None if namespaces else conversation, asked


async def ask(
    settings: Settings, questions: list[locomo.Question], namespaces: bool
) -> dict[str, Any]:
    """Every question in every mode: recall and latency per mode and group (all, dev,
    held-out, category)."""
    scores: Scores = {mode: {} for mode in MODES}
    async for client, session, asked in by_conversation(settings, questions, namespaces):
        for q in asked:
            split, category = "held_out" if q.held_out else "dev", locomo.CATEGORIES[q.category]
            groups = ("all", split, category, f"{category} {split}")
            for mode in MODES:
                t0 = time.perf_counter()
                hits = await client.search(q.text, top_k=10, mode=mode, session_id=session)
                ms = (time.perf_counter() - t0) * 1000
                sources = [h.source for h in hits]
                r5 = len(q.evidence & set(sources[:5])) / len(q.evidence)
                r10 = len(q.evidence & set(sources)) / len(q.evidence)
                for group in groups:
                    scores[mode].setdefault(group, []).append((r5, r10, ms))
    return {
        mode: {g: _summary(rows) for g, rows in by_group.items()}
        for mode, by_group in scores.items()
    }


async def sweep_floors(
    settings: Settings, questions: list[locomo.Question], args: argparse.Namespace
) -> dict[str, dict[str, float]]:
    """Hybrid and vector recall@10, and the hits of nonsense queries, for each floor pair."""
    out: dict[str, dict[str, float]] = {}
    for pair in args.floors.split(","):
        vector, contextual = (float(x) for x in pair.split(":"))
        floored = settings.model_copy(
            update={"search_min_vector": vector, "search_min_contextual": contextual}
        )
        sums: dict[str, list[float]] = {}
        nonsense: list[int] = []
        async for client, session, asked in by_conversation(floored, questions, args.namespaces):
            for q in asked:
                for mode in ("hybrid", "vector"):
                    hits = await client.search(q.text, top_k=10, mode=mode, session_id=session)
                    r10 = len(q.evidence & {h.source for h in hits}) / len(q.evidence)
                    for group in ("all", "held_out" if q.held_out else "dev"):
                        sums.setdefault(f"{mode} {group} r10", []).append(r10)
            for query in NONSENSE:
                nonsense.append(len(await client.search(query, top_k=10, session_id=session)))
        row = {k: sum(v) / len(v) for k, v in sums.items()}
        row["nonsense hits / 10"] = sum(nonsense) / len(nonsense)
        out[pair] = row
    return out


async def measure(args: argparse.Namespace, url: str) -> dict[str, Any]:
    data = locomo.load()[: args.conversations]
    settings = Settings(
        redis_url=url,
        key_prefix=f"bench{uuid.uuid4().hex[:6]}",
        namespace="locomo",
        profile="ephemeral",
        embedder=args.embedder,
        hybrid_alpha=args.alpha,
        hybrid_fusion=args.fusion,
        search_candidates=args.candidates,
        contextual_embedder=args.contextual,
        hybrid_contextual_weight=args.contextual_weight,
        max_backlog=1_000_000,
    )
    turns, questions = locomo.turns(data), locomo.questions(data)
    ingest = ingest_direct if args.direct else ingest_public
    started = time.perf_counter()
    counts: dict[str, int] = {}
    if args.namespaces:  # one pool per conversation, searched without a session filter
        for conv in data:
            own = settings.model_copy(update={"namespace": conv["sample_id"]})
            mine = [t for t in turns if t.conversation == conv["sample_id"]]
            for key, value in (await ingest(own, mine, args.context)).items():
                counts[key] = counts.get(key, 0) + value
    else:
        counts = await ingest(settings, turns, args.context)
    print(f"{len(turns)} turns written: {counts} ({time.perf_counter() - started:.1f} s)")
    if args.floors:
        return {"ingest": counts, "floors": await sweep_floors(settings, questions, args)}
    modes = await ask(settings, questions, args.namespaces)
    hybrid, keyword = modes["hybrid"]["all"]["r10"], modes["keyword"]["all"]["r10"]
    return {"ingest": counts, "modes": modes, "hybrid_vs_keyword_r10": ratio(hybrid, keyword)}


def report(figures: dict[str, Any]) -> None:
    """The tables, in markdown."""
    if "floors" in figures:
        rows = figures["floors"]
        cols = list(next(iter(rows.values())))
        print("\n| floors | " + " | ".join(cols) + " |\n|---" + "|---:" * len(cols) + "|")
        for pair, row in rows.items():
            print(f"| {pair} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |")
        return
    modes = figures["modes"]
    groups = [g for g in ("all", "dev", "held_out") if g in modes["hybrid"]]
    print(
        "\n| mode | "
        + " | ".join(f"{g} R@5 | {g} R@10" for g in groups)
        + f" | {groups[-1]} p50 / p99 ms |"
    )
    print("|---" + "|---:" * (2 * len(groups) + 1) + "|")
    for mode, by_group in modes.items():
        cells = [f"{by_group[g]['r5']:.3f} | {by_group[g]['r10']:.3f}" for g in groups]
        last = by_group[groups[-1]]
        print(
            f"| {mode} | " + " | ".join(cells) + f" | {last['p50_ms']:.2f} / {last['p99_ms']:.2f} |"
        )
    names = [n for n in locomo.CATEGORIES.values() if n in modes["hybrid"]]
    print("\n| mode | " + " | ".join(f"{n} R@10" for n in names) + " |")
    print("|---" + "|---:" * len(names) + "|")
    for mode, by_group in modes.items():
        print(f"| {mode} | " + " | ".join(f"{by_group[n]['r10']:.3f}" for n in names) + " |")
    hybrid = modes["hybrid"]
    splits = [s for s in ("dev", "held_out") if all(f"{n} {s}" in hybrid for n in names)]
    print("\n| hybrid R@10 | " + " | ".join(names) + " |\n|---" + "|---:" * len(names) + "|")
    for split in splits:
        print(
            f"| {split} | "
            + " | ".join(f"{hybrid[f'{n} {split}']['r10']:.3f}" for n in names)
            + " |"
        )


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.quick and args.conversations is None:
        args.conversations = 1
    with default_search_redis() if args.default_gc else embedded_redis() as url:
        figures = asyncio.run(measure(args, url))
    report(figures)
    return figures
