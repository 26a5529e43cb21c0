"""Chinese retrieval: Chinese questions for Chinese memories, worded differently.

Writes the memories of a labelled set (``tests/data/chinese_retrieval.jsonl``, the
development set, and ``chinese_retrieval_heldout.jsonl``, written apart and not tuned on:
preferences, facts about people, schedules, technical notes, short texts, and distractors
sharing their words) through the public path with the default settings
(``AsyncMemoryClient.write_many``, a burst ``Worker``), then asks each question with
``client.search(top_k=5)``: hit@1 / hit@3 / hit@5 of the memory it names, per set and kind,
and how many targets the pipeline did not index (dropped or merged).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from benchmarks.harness import bench_settings, embedded_redis
from benchmarks.measure import percentile
from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.core.keys import Keys
from hindsight_redis.providers.multilingual import CHINESE_FIELD, unpack

SUMMARY = "hit@1 / @3 / @5 of Chinese questions for Chinese memories (dev and held-out sets)"
DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SETS = {"dev": "chinese_retrieval.jsonl", "held_out": "chinese_retrieval_heldout.jsonl"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, help="one labelled set instead of both")


def load(path: Path) -> list[dict[str, Any]]:
    """The rows of a labelled set: ``id``, ``kind``, ``memory``, ``queries``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def measure(url: str, name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    settings = bench_settings(url, namespace=f"zh-{name}")
    # the baseline: the same memories searched without the multilingual re-ranking
    plain = settings.model_copy(update={"chinese_rerank_weight": 0.0})
    async with AsyncMemoryClient(settings) as client, AsyncMemoryClient(plain) as baseline:
        receipts = await client.write_many([{"content": r["memory"]} for r in rows])
        await Worker(settings).run_async(burst=True)
        ids = {r["id"]: receipt.id for r, receipt in zip(rows, receipts, strict=True)}
        records = {i: await client.get(i) for i in ids.values()}
        stored = {i for i, record in records.items() if record and record.status == "active"}
        vectors = await _stored_vectors(url, client.keys, stored)
        runs: dict[str, dict[str, list[int]]] = {"default": {}, "baseline": {}}
        seconds: dict[str, list[float]] = {"default": [], "baseline": []}
        misses = []
        for row in rows:
            for n, query in enumerate(row["queries"]):
                pairs = [("default", client), ("baseline", baseline)]
                for label, searcher in pairs if n % 2 == 0 else pairs[::-1]:  # alternating
                    started = time.perf_counter()
                    found = [h.id for h in await searcher.search(query, top_k=5)]
                    seconds[label].append(time.perf_counter() - started)
                    target = ids[row["id"]]
                    rank = found.index(target) + 1 if target in found else 0
                    for group in ("all", row["kind"]):
                        runs[label].setdefault(group, []).append(rank)
                    if label == "default" and rank != 1:
                        why = rank or (">5" if target in stored else "not indexed")
                        misses.append(f"{query} -> {row['memory']} (rank {why})")
    out: dict[str, Any] = {}
    for group, ranks in runs["default"].items():
        out[group] = {"questions": len(ranks), **_hits(ranks)}
        out[group]["baseline"] = _hits(runs["baseline"][group])
    targets = [r for r in rows if r["queries"]]
    out["targets not indexed"] = sum(ids[r["id"]] not in stored for r in targets)
    out["multilingual vectors stored"] = f"{vectors}/{len(stored)}"
    out["search ms p50 / p99"] = {
        label: [round(percentile(s, q) * 1000, 2) for q in (50, 99)] for label, s in seconds.items()
    }
    out["misses"] = misses
    return out


async def _stored_vectors(url: str, keys: Keys, ids: set[str]) -> int:
    """How many of the memories ``ids`` have their multilingual vector (the refiners')."""
    redis = Redis.from_url(url)
    try:
        count = 0
        for memory_id in ids:
            content, raw = await redis.hmget(keys.doc(memory_id), ["content", CHINESE_FIELD])
            count += unpack((content or b"").decode(), raw) is not None
        return count
    finally:
        await redis.aclose()


def _hits(ranks: list[int]) -> dict[str, float]:
    return {f"hit@{k}": sum(0 < r <= k for r in ranks) / len(ranks) for k in (1, 3, 5)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    sets = {args.data.stem: args.data} if args.data else {k: DATA / v for k, v in SETS.items()}
    figures: dict[str, Any] = {}
    with embedded_redis() as url:
        for name, path in sets.items():
            figures[name] = asyncio.run(measure(url, name, load(path)))
    for name, result in figures.items():
        print(f"\n{name}: {result['targets not indexed']} targets not indexed; misses:")
        print("\n".join(f"  {m}" for m in result["misses"]))
        latency = result["search ms p50 / p99"]
        print(
            f"search p50 / p99 ms: {latency['default']} (without the re-ranking, alternating: "
            f"{latency['baseline']}); multilingual vectors stored by the refiners: "
            f"{result['multilingual vectors stored']}"
        )
        print(
            "| kind | questions | hit@1 | hit@3 | hit@5 | without the re-ranking |\n"
            "|---|---:|---:|---:|---:|---|"
        )
        for group, row in result.items():
            if isinstance(row, dict) and "questions" in row:
                base = row["baseline"]
                print(
                    f"| {group} | {row['questions']} | {row['hit@1']:.2f} | "
                    f"{row['hit@3']:.2f} | {row['hit@5']:.2f} | "
                    f"{base['hit@1']:.2f} / {base['hit@3']:.2f} / {base['hit@5']:.2f} |"
                )
    return figures
