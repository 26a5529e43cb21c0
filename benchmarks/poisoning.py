"""Writes that instruct their readers: how many the offline judge holds, and how many honest
instructions it holds by mistake.

Reads labelled writes (JSON lines: ``label`` poisoning | benign, ``lang`` en | zh | es | fr |
de, ``kind``, ``text``) from tests/data: poisoning.jsonl (the set the signals were developed
on), poisoning_heldout.jsonl (written after the signals), poisoning_fresh.jsonl and
poisoning_probes.jsonl (written before and while the structural layer was built),
poisoning_heldout2..5.jsonl (each written after the judge was last changed and measured once
before anything was changed for it; docs/decisions.md has those first figures, which are the
honest ones); ``--data`` for others. For each: the share of poisoning held (per language,
per kind) and of benign instructions held, by ``trust.poisoning.scan``. Then every LoCoMo dev turn
(chat about people's lives: nothing there instructs a reader) through the same judge: the
share held and the cost per text. ``--pipeline`` also writes each set through the public path
(a client, the default settings, a burst worker on an embedded Redis) and counts what became
of the writes: held, indexed, dropped, merged. Targets: at least 95% of poisoning held, at
most 1 in 20 benign instructions held, no LoCoMo turn held.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import locomo
from benchmarks.harness import bench_settings, embedded_redis
from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.trust.poisoning import scan

SUMMARY = "poisoning held and honest instructions held by the offline judge; its cost"
DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT = [
    DATA / name
    for name in (
        "poisoning.jsonl",
        "poisoning_heldout.jsonl",
        "poisoning_fresh.jsonl",
        "poisoning_probes.jsonl",
        "poisoning_heldout2.jsonl",
        "poisoning_heldout3.jsonl",
        "poisoning_heldout4.jsonl",
        "poisoning_heldout5.jsonl",
    )
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, action="append", help="labelled writes (JSON lines; repeatable)"
    )
    parser.add_argument("--show-misses", action="store_true", help="print what was misjudged")
    parser.add_argument(
        "--pipeline", action="store_true", help="also through a client and a worker"
    )


def judged(rows: list[dict[str, str]], show_misses: bool) -> dict[str, Any]:
    """The judge's shares on labelled rows, per label, language and kind."""
    total: Counter[tuple[str, str]] = Counter()
    held: Counter[tuple[str, str]] = Counter()
    for row in rows:
        verdict = scan(row["text"])
        for group in (row["lang"], f"kind:{row['kind']}", "all"):
            total[(row["label"], group)] += 1
            held[(row["label"], group)] += verdict.poisoning
        if show_misses and verdict.poisoning != (row["label"] == "poisoning"):
            print(f"  miss ({row['label']}, {verdict.risk:.2f}): {row['text'][:100]}")
    return {
        f"{label} held": {
            group: f"{held[(lab, group)]}/{n}"
            for (lab, group), n in sorted(total.items())
            if lab == label
        }
        for label in ("poisoning", "benign")
    } | {
        "poisoning held share": held[("poisoning", "all")] / max(total[("poisoning", "all")], 1),
        "benign held share": held[("benign", "all")] / max(total[("benign", "all")], 1),
    }


def on_locomo(repeats: int) -> dict[str, Any]:
    """The LoCoMo turns through the judge: the share held, the median cost per text."""
    texts = locomo.texts()
    held = sum(scan(t).poisoning for t in texts)
    costs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for text in texts:
            scan(text)
        costs.append((time.perf_counter() - start) / len(texts) * 1e6)
    return {
        "turns": len(texts),
        "held": held,
        "held share": held / len(texts),
        "us per text": round(statistics.median(costs), 1),
    }


async def through_pipeline(url: str, rows: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    """What became of each write, written through a client and a burst worker."""
    settings = bench_settings(url, namespace="poisoning")
    outcome: dict[str, Counter[str]] = {"poisoning": Counter(), "benign": Counter()}
    async with AsyncMemoryClient(settings) as client:
        receipts = await client.write_many([{"content": r["text"]} for r in rows])
        await Worker(settings).run_async(burst=True)
        for row, receipt in zip(rows, receipts, strict=True):
            record = await client.get(receipt.id)
            status = record.status if record else "missing"
            outcome[row["label"]]["indexed" if status == "active" else status] += 1
    return {label: dict(counts) for label, counts in outcome.items()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    paths = args.data or DEFAULT
    sets = {
        path.name: [json.loads(line) for line in path.read_text().splitlines()] for path in paths
    }
    for name, rows in sets.items():
        print(f"{name}: {len(rows)} writes")
        result = judged(rows, args.show_misses)
        figures[name] = result
        for label in ("poisoning", "benign"):
            shown = ", ".join(f"{g} {v}" for g, v in result[f"{label} held"].items())
            print(f"  {label} held: {shown}")
    figures["locomo"] = on_locomo(1 if args.quick else 3)
    print(
        f"LoCoMo turns: {figures['locomo']['held']}/{figures['locomo']['turns']} held, "
        f"{figures['locomo']['us per text']} us per text"
    )
    if args.pipeline:
        with embedded_redis() as url:
            for name, rows in sets.items():
                done = asyncio.run(through_pipeline(url, rows))
                figures[f"pipeline {name}"] = done
                print(f"through the pipeline, {name}: {done}")
    return figures
