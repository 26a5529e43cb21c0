"""LoCoMo retrieval recall@k of vector, keyword and hybrid search, through the public API.

Every dialogue turn of the dev conversations is written with
``AsyncMemoryClient.write_many`` as an agent would record a chat turn:
content ``"Speaker: text"``, source = its dia_id, session_id = the
conversation id, ``occurred_at`` = the session's date (so hits show it), and the
session's date as a tag (metadata, like a timestamp: in
the content it would also inflate the heuristic write score, which counts
dates, and so defeat the filter), with ``context_from_previous=2`` (each turn's
contextual vector also reads the two turns before it: ``--context``).
``Worker.run_async(burst=True)`` then runs the real pipeline (rules, heuristic
write score, summarizer, embed, dedup), so turns the filters drop cannot be
found. Each question of categories 1-4 is searched with
``client.search(question, top_k=10, session_id=...)``; recall@k is the share
of the cited turns (``evidence``) in the top k, averaged over questions, for
all conversations and for the held-out ones (3-4; parameters were chosen on
0-2).

Run:  python benchmarks/locomo_recall.py [--embedder local] [--alpha 0.5]
      [--contextual none] [--contextual-weight 0.4] [--context 2]
      [--direct]   (--direct: index every turn without the worker, for
                    fast iteration; recorded figures use the public path)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.index import MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent
from hindsight_redis.neighbours import SessionTails
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings

from common import default_search_redis, embedded_redis, locomo_path, percentile, queue_memory

CATEGORIES = {1, 2, 3, 4}
CATEGORY_NAMES = {
    "category 1": "multi-hop", "category 2": "temporal", "category 3": "open-domain",
    "category 4": "single-hop",
}  # fmt: skip
HELD_OUT = 2  # conversations from index 3 on were not used to choose parameters
CONTEXT_TURNS = 2  # write_many(context_from_previous=...): what a transcript's writer would pass
Turn = tuple[str, str, str, str]  # (conversation id, dia_id, content, session date)


def load_turns(data: list[dict[str, Any]]) -> list[Turn]:
    """(conversation id, dia_id, "Speaker: text", session date) of every turn."""
    turns = []
    for conv in data:
        talk = conv["conversation"]
        for key, value in talk.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
                date = str(talk.get(f"{key}_date_time", ""))
                for turn in value:
                    content = f"{turn['speaker']}: {turn['text']}"
                    turns.append((conv["sample_id"], turn["dia_id"], content, date))
    return turns


def session_time(text: str) -> float | None:
    """A LoCoMo session date ("1:56 pm on 8 May, 2023") as unix seconds (UTC); None if not one."""
    try:
        moment = datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None
    return moment.timestamp()


def held_out_questions(data: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(question, conversation id) of the held-out conversations' scored questions."""
    return [
        (qa["question"], conv["sample_id"])
        for n, conv in enumerate(data)
        if n > HELD_OUT
        for qa in conv["qa"]
        if qa.get("category") in CATEGORIES and qa.get("evidence")
    ]


def evidence_ids(raw: list[str]) -> set[str]:
    """Cited dia_ids, tolerant of the dataset's odd separators."""
    return {p for item in raw for p in re.split(r"[;,\s]+", item) if p}


async def ingest_public(
    settings: Settings, turns: list[Turn], context_from_previous: int = 0
) -> dict[str, int]:
    """write_many every turn, drain the stream with a burst worker; worker counts.

    ``context_from_previous``: each turn's contextual vector also reads that many
    previous turns of its conversation (``write_many``'s option)."""
    async with AsyncMemoryClient(settings) as client:
        for start in range(0, len(turns), 500):
            await client.write_many(
                [
                    {
                        "content": content,
                        "source": dia,
                        "session_id": conv,
                        "tags": [date],
                        "occurred_at": session_time(date),
                    }
                    for conv, dia, content, date in turns[start : start + 500]
                ],
                context_from_previous=context_from_previous,
            )
    report = await Worker(settings).run_async(burst=True)
    return {"indexed": report.indexed, "merged": report.merged, "dropped": report.dropped}


async def ingest_direct(
    settings: Settings, turns: list[Turn], context_from_previous: int = 0
) -> dict[str, int]:
    """Index every turn without the worker (no filters): for fast iteration only."""
    contexts = [
        item.get("context")
        for item in SessionTails().fill(
            [{"content": t[2], "session_id": t[0]} for t in turns], context_from_previous, ""
        )[0]
    ] if context_from_previous else [None] * len(turns)  # fmt: skip
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = embedder_from_settings(settings)
    contextual = contextual_from_settings(settings)
    redis = Redis.from_url(settings.redis_url or "")
    try:
        info = await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).ensure(embedder, contextual)
        now = time.time()
        for start in range(0, len(turns), 256):
            chunk = turns[start : start + 256]
            vectors = await embedder.embed([t[2] for t in chunk])
            around = contexts[start : start + 256]
            async with redis.pipeline(transaction=False) as pipe:
                for offset, ((conv, dia, content, date), vec, ctx) in enumerate(
                    zip(chunk, vectors, around, strict=True)
                ):
                    memory_id = f"{conv}-{dia}".replace(":", "_")
                    # written in turn order, a millisecond apart, as a transcript's writes
                    # are (the turns that tell when are read by created_at: time_search)
                    written = now + (start + offset) / 1000
                    event = MemoryEvent(
                        event_id=memory_id, namespace=keys.namespace, content=content,
                        session_id=conv, source=dia, tags=(date,), created_at=written,
                        occurred_at=session_time(date), context=ctx,
                    )  # fmt: skip
                    queue_memory(pipe, keys, info, event, vec)
                await pipe.execute()
        await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).wait_indexed(info.name)
        if contextual is not None:  # what the workers' refiners would do
            refiner = Refiner(redis, keys, contextual, batch_size=256)
            while await refiner.refine_once():
                pass
    finally:
        await redis.aclose()
    return {"indexed": len(turns), "merged": 0, "dropped": 0}


async def run(args: argparse.Namespace, url: str) -> dict[str, dict[str, float]]:
    """Ingest, ask every question in every mode; recall per mode and split, and each
    mode's search latency (p50/p99 ms, through the public client)."""
    data = json.loads(locomo_path().read_text())
    settings = Settings(
        redis_url=url, key_prefix=f"bench{uuid.uuid4().hex[:6]}", namespace="locomo",
        profile="ephemeral", embedder=args.embedder, hybrid_alpha=args.alpha,
        hybrid_fusion=args.fusion, search_candidates=args.candidates,
        contextual_embedder=args.contextual, hybrid_contextual_weight=args.contextual_weight,
        max_backlog=1_000_000,
    )  # fmt: skip
    turns = load_turns(data)
    started = time.perf_counter()
    ingest = ingest_direct if args.direct else ingest_public
    if args.namespaces:  # one pool per conversation, searched without a session filter
        counts: dict[str, int] = {}
        for conv in data:
            own = settings.model_copy(update={"namespace": conv["sample_id"]})
            part = await ingest(own, [t for t in turns if t[0] == conv["sample_id"]], args.context)
            counts = {k: counts.get(k, 0) + v for k, v in part.items()}
    else:
        counts = await ingest(settings, turns, args.context)
    print(f"{len(turns)} turns written, {counts} ({time.perf_counter() - started:.1f} s)")
    fused = "hybrid rrf" if args.fusion == "rrf" else f"hybrid linear a={args.alpha}"
    modes = {"vector": "vector", "keyword": "keyword", fused: "hybrid"}
    if args.floors:
        return await sweep_floors(args, data, settings)
    sums: dict[str, dict[str, list[float]]] = {}
    latency: dict[str, dict[str, list[float]]] = {}
    for n, conv in enumerate(data):
        split = "held-out (3-4)" if n > HELD_OUT else "dev (0-2)"
        scoped = settings.model_copy(update={"namespace": conv["sample_id"]})
        async with AsyncMemoryClient(scoped if args.namespaces else settings) as client:
            for qa in conv["qa"]:
                if qa.get("category") not in CATEGORIES or not qa.get("evidence"):
                    continue
                wanted = evidence_ids(qa["evidence"])
                groups = (split, "all", f"category {qa['category']}")
                for label, mode in modes.items():
                    session = None if args.namespaces else conv["sample_id"]
                    t0 = time.perf_counter()
                    hits = await client.search(
                        qa["question"], top_k=10, mode=mode,  # type: ignore[arg-type]
                        session_id=session,
                    )  # fmt: skip
                    ms = (time.perf_counter() - t0) * 1000
                    for key in groups:
                        latency.setdefault(label, {}).setdefault(key, []).append(ms)
                    sources = [h.source for h in hits]
                    r5 = len(wanted & set(sources[:5])) / len(wanted)
                    r10 = len(wanted & set(sources[:10])) / len(wanted)
                    for key in groups:
                        sums.setdefault(label, {}).setdefault(key, []).extend([r5, r10])
    return {
        label: {
            **{
                f"{key} @{k}": sum(vals[i::2]) / (len(vals) // 2)
                for key, vals in by_split.items()
                for i, k in ((0, 5), (1, 10))
            },
            **{
                f"{key} p{q} ms": percentile(times, q)
                for key, times in latency[label].items()
                for q in (50, 99)
            },
        }
        for label, by_split in sums.items()
    }


NONSENSE = ["🚀", "asdkjh qwpoe zzkx", "xyzzy plugh", "lorem ipsum dolor sit amet", "???",
            "qzxv", "the the the", "🙂🙂 ok"]  # fmt: skip


async def sweep_floors(
    args: argparse.Namespace, data: list[dict[str, Any]], settings: Settings
) -> dict[str, dict[str, float]]:
    """Hybrid and vector recall, and the hits of nonsense queries, for each floor pair."""
    results: dict[str, dict[str, float]] = {}
    for pair in args.floors.split(","):
        vec, ctx = (float(x) for x in pair.split(":"))
        floored = settings.model_copy(
            update={"search_min_vector": vec, "search_min_contextual": ctx}
        )
        sums: dict[str, list[float]] = {}
        nonsense = 0
        async with AsyncMemoryClient(floored) as client:
            for n, conv in enumerate(data):
                split = "held-out (3-4)" if n > HELD_OUT else "dev (0-2)"
                for qa in conv["qa"]:
                    if qa.get("category") not in CATEGORIES or not qa.get("evidence"):
                        continue
                    wanted = evidence_ids(qa["evidence"])
                    for mode in ("hybrid", "vector"):
                        hits = await client.search(
                            qa["question"], top_k=10, mode=mode, session_id=conv["sample_id"]
                        )
                        r10 = len(wanted & {h.source for h in hits}) / len(wanted)
                        for key in (split, "all"):
                            sums.setdefault(f"{mode} {key} @10", []).append(r10)
                for query in NONSENSE:
                    hits = await client.search(query, top_k=10, session_id=conv["sample_id"])
                    nonsense += len(hits)
        row = {k: sum(v) / len(v) for k, v in sums.items()}
        row["nonsense hits / 10"] = nonsense / (len(NONSENSE) * len(data))
        results[f"floors vector {vec} / contextual {ctx}"] = row
    return results


def main() -> None:
    """Parse arguments, start a throwaway embedded Redis, print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--alpha", type=float, default=Settings().hybrid_alpha)
    parser.add_argument("--fusion", default=Settings().hybrid_fusion, choices=["linear", "rrf"])
    parser.add_argument("--candidates", type=int, default=Settings().search_candidates)
    parser.add_argument("--contextual", default=Settings().contextual_embedder)
    parser.add_argument(
        "--contextual-weight", type=float, default=Settings().hybrid_contextual_weight
    )
    parser.add_argument("--direct", action="store_true", help="index without the worker")
    parser.add_argument(
        "--context", type=int, default=CONTEXT_TURNS, metavar="N",
        help=f"contextual vectors also read the N previous turns (default {CONTEXT_TURNS}; 0: off)",
    )  # fmt: skip
    parser.add_argument(
        "--namespaces",
        action="store_true",
        help="one namespace per conversation, searched without filters (the unfiltered path)",
    )
    parser.add_argument(
        "--floors",
        help="VECTOR:CONTEXTUAL floor pairs to sweep on one ingest, e.g. 0:0,0.4:0.3",
    )
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="on a server whose search module keeps its default GC (not the embedded one)",
    )
    args = parser.parse_args()
    with default_search_redis() if args.default_gc else embedded_redis() as url:
        results = asyncio.run(run(args, url))
    cols = ["all @5", "all @10", "dev (0-2) @5", "dev (0-2) @10"]
    cols += ["held-out (3-4) @5", "held-out (3-4) @10", "held-out (3-4) p50 ms"]
    cols += ["held-out (3-4) p99 ms"]
    if args.floors:
        cols = [c for c in next(iter(results.values()))]
    print("\n| mode | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for mode, r in results.items():
        print(f"| {mode} | " + " | ".join(f"{r[c]:.3f}" for c in cols) + " |")
    if not args.floors:
        print_categories(results)


def print_categories(results: dict[str, dict[str, float]]) -> None:
    """Recall@10 of each mode per LoCoMo category (all conversations)."""
    names = sorted({k.removesuffix(" @10") for r in results.values() for k in r if
                    k.startswith("category ") and k.endswith(" @10")})  # fmt: skip
    print("\n| mode | " + " | ".join(f"{n} ({CATEGORY_NAMES[n]}) @10" for n in names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for mode, r in results.items():
        print(f"| {mode} | " + " | ".join(f"{r[n + ' @10']:.3f}" for n in names) + " |")


if __name__ == "__main__":
    main()
