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
from pathlib import Path
from typing import Any

from benchmarks.harness import bench_settings, embedded_redis
from hindsight_redis import AsyncMemoryClient, Worker

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
    async with AsyncMemoryClient(settings) as client:
        receipts = await client.write_many([{"content": r["memory"]} for r in rows])
        await Worker(settings).run_async(burst=True)
        ids = {r["id"]: receipt.id for r, receipt in zip(rows, receipts, strict=True)}
        records = {i: await client.get(i) for i in ids.values()}
        stored = {i for i, record in records.items() if record and record.status == "active"}
        by_kind: dict[str, list[int]] = {}  # kind -> rank of the target (0: not in the top 5)
        misses = []
        for row in rows:
            for query in row["queries"]:
                found = [h.id for h in await client.search(query, top_k=5)]
                rank = found.index(ids[row["id"]]) + 1 if ids[row["id"]] in found else 0
                for group in ("all", row["kind"]):
                    by_kind.setdefault(group, []).append(rank)
                if rank != 1:
                    why = rank or (">5" if ids[row["id"]] in stored else "not indexed")
                    misses.append(f"{query} -> {row['memory']} (rank {why})")
    out: dict[str, Any] = {}
    for group, ranks in by_kind.items():
        out[group] = {
            "questions": len(ranks),
            **{f"hit@{k}": sum(0 < r <= k for r in ranks) / len(ranks) for k in (1, 3, 5)},
        }
    targets = [r for r in rows if r["queries"]]
    out["targets not indexed"] = sum(ids[r["id"]] not in stored for r in targets)
    out["misses"] = misses
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sets = {args.data.stem: args.data} if args.data else {k: DATA / v for k, v in SETS.items()}
    figures: dict[str, Any] = {}
    with embedded_redis() as url:
        for name, path in sets.items():
            figures[name] = asyncio.run(measure(url, name, load(path)))
    for name, result in figures.items():
        print(f"\n{name}: {result['targets not indexed']} targets not indexed; misses:")
        print("\n".join(f"  {m}" for m in result["misses"]))
        print("| kind | questions | hit@1 | hit@3 | hit@5 |\n|---|---:|---:|---:|---:|")
        for group, row in result.items():
            if isinstance(row, dict):
                print(
                    f"| {group} | {row['questions']} | {row['hit@1']:.2f} | "
                    f"{row['hit@3']:.2f} | {row['hit@5']:.2f} |"
                )
    return figures
