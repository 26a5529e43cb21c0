"""Cross-language retrieval: English questions for Chinese memories, and the reverse.

Writes the memories of tests/data/crosslang.jsonl (30 targets, 15 per direction, and 25
distractors sharing their words, both languages) through the public path (a burst worker,
filters off so every target is stored), then asks each query with
``client.search(mode="hybrid", top_k=5)``: hit@1 and hit@5 per direction, with the default
settings and, as the baseline, with each ``--against`` setting (default: without the
cross-language ranking), each in its own namespace of one server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from benchmarks.harness import bench_settings, embedded_redis
from hindsight_redis import AsyncMemoryClient, Worker

SUMMARY = "hit@1 / hit@5 of English questions for Chinese memories and the reverse"
DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "crosslang.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--against",
        action="append",
        help="settings overrides to compare with the defaults, e.g. "
        "'search_min_vector=-1,hybrid_cross_language=false' (repeatable; "
        "default: hybrid_cross_language=false)",
    )


def overrides(assignments: str) -> dict[str, Any]:
    """``"a=1,b=false"`` as settings overrides."""
    out: dict[str, Any] = {}
    for item in filter(None, assignments.split(",")):
        name, _, value = item.partition("=")
        out[name] = {"true": True, "false": False}.get(value, value)
    return out


async def measure(url: str, assignments: str) -> dict[str, float]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    settings = bench_settings(
        url, namespace="crosslang", filters_enabled=False, **overrides(assignments)
    )
    async with AsyncMemoryClient(settings) as client:
        receipts = await client.write_many([{"content": r["memory"]} for r in rows])
        await Worker(settings).run_async(burst=True)
        hits: dict[str, list[tuple[bool, bool]]] = {}
        for row, receipt in zip(rows, receipts, strict=True):
            if row["direction"] == "distractor":
                continue
            found = [h.id for h in await client.search(row["query"], top_k=5)]
            hits.setdefault(row["direction"], []).append(
                (found[:1] == [receipt.id], receipt.id in found)
            )
    out = {}
    for direction, results in sorted(hits.items()):
        out[f"{direction} hit@1"] = sum(a for a, _ in results) / len(results)
        out[f"{direction} hit@5"] = sum(b for _, b in results) / len(results)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures = {}
    with embedded_redis() as url:
        for assignments in ["", *(args.against or ["hybrid_cross_language=false"])]:
            figures[assignments or "defaults"] = asyncio.run(measure(url, assignments))
    for name, result in figures.items():
        print(f"{name}: " + ", ".join(f"{k} {v:.2f}" for k, v in result.items()))
    return figures
