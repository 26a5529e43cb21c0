"""Cross-language retrieval: English questions for Chinese memories, and the reverse.

Writes the memories of tests/data/crosslang.jsonl (30 targets, 15 per
direction, and 25 distractors sharing their words, both languages) through
the public path (a burst worker, filters off so every target is stored),
then asks each query with ``client.search(mode="hybrid", top_k=5)`` and
reports hit@1 and hit@5 per direction, for each setting given.

    python benchmarks/crosslang.py [--settings 'hybrid_cross_language=false']
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hindsight_redis import AsyncMemoryClient, Settings, Worker

from common import embedded_redis

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "crosslang.jsonl"


def _parse(assignments: str) -> dict[str, Any]:
    """``"a=1,b=false"`` as settings overrides."""
    out: dict[str, Any] = {}
    for item in filter(None, assignments.split(",")):
        name, _, value = item.partition("=")
        out[name] = {"true": True, "false": False}.get(value, value)
    return out


async def measure(url: str, overrides: dict[str, Any]) -> dict[str, float]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    settings = Settings(
        redis_url=url, key_prefix=f"x{uuid.uuid4().hex[:6]}", namespace="crosslang",
        profile="ephemeral", filters_enabled=False, **overrides,
    )  # fmt: skip
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--settings",
        action="append",
        default=[""],
        help="settings overrides to compare, e.g. 'hybrid_cross_language=false' (repeatable)",
    )
    args = parser.parse_args()
    with embedded_redis() as url:
        for assignments in args.settings:
            result = asyncio.run(measure(url, _parse(assignments)))
            cells = ", ".join(f"{k} {v:.2f}" for k, v in result.items())
            print(f"{assignments or 'defaults'}: {cells}")


if __name__ == "__main__":
    main()
