"""Secrets at the write edge: what the detector finds, what it costs a write.

1. The labelled set (``tests/data/secrets.jsonl``; ``--data`` for another): recall (a secret
   counts as found when the text is masked and none of its secret strings survives) and
   false positives (a look-alike changed at all), per kind and per language.
2. Speed: microseconds per text of the whole scan on the set's texts, and on every LoCoMo
   turn the cheap look alone (``might_hold_secret``), a batch's look
   (``might_hold_secrets``) and a batch screened as ``write_many`` screens it; the share of
   turns that reach the detectors and of those changed (0: conversation is left alone).
3. ``write_many(500)`` of LoCoMo turns with ``secrets=mask`` against ``secrets=keep`` (no
   scan), alternating rounds on one embedded Redis; the median of each.
Targets: recall >= 0.95, false positives <= 3%; write_many within a few percent.
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
from benchmarks.measure import ratio
from hindsight_redis import AsyncMemoryClient
from hindsight_redis.trust.edge import screen_many
from hindsight_redis.trust.secrets import mask_secrets, might_hold_secret, might_hold_secrets

SUMMARY = "secrets found and look-alikes kept on the labelled set; us per text; write_many cost"
DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "data" / "secrets.jsonl"
BATCH = 500


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=DEFAULT, help="a labelled set (JSONL)")
    parser.add_argument("--writes", type=int, help="per round of the A/B (default 20,000)")
    parser.add_argument("--rounds", type=int, help="rounds of the A/B (default 10)")


def accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall and false positives on ``rows``, overall and per kind and language."""
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed, changed = [], []
    for row in rows:
        masked, kinds = mask_secrets(row["text"])
        if row["label"] == "secret":
            ok = bool(kinds) and not any(s in masked for s in row["secrets"])
            if not ok:
                missed.append(row["text"][:100])
        else:
            ok = masked == row["text"]
            if not ok:
                changed.append(row["text"][:100])
        for key in (row["label"], f"{row['label']}/{row['kind']}", f"{row['label']}/{row['lang']}"):
            total[key] += 1
            found[key] += ok
    return {
        "secrets": total["secret"],
        "look_alikes": total["benign"],
        "recall": found["secret"] / total["secret"],
        "false_positives": 1 - found["benign"] / total["benign"],
        "by_group": {k: {"n": n, "right": found[k] / n} for k, n in sorted(total.items())},
        "missed": missed,
        "changed": changed,
    }


def per_text_us(call: Any, items: list[Any], repeat: int = 5) -> float:
    """Microseconds per item of ``call(item)``, the best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            call(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def per_batch_us(call: Any, items: list[Any], repeat: int = 5) -> float:
    """Microseconds per item of ``call(batch)`` over ``items`` in batches of ``BATCH``."""
    batches = [items[n : n + BATCH] for n in range(0, len(items), BATCH)]
    return per_text_us(call, batches, repeat) * len(batches) / len(items)


def speed(rows: list[dict[str, Any]], turns: list[str]) -> dict[str, float]:
    """The costs of section 2."""
    texts = [row["text"] for row in rows]
    items = [{"content": turn} for turn in turns]
    reached = [t for t in turns if might_hold_secret(t)]
    return {
        "scan_us_per_set_text": per_text_us(mask_secrets, texts),
        "look_us_per_turn": per_text_us(might_hold_secret, turns),
        "batch_look_us_per_turn": per_batch_us(might_hold_secrets, turns),
        "batch_screen_us_per_turn": per_batch_us(lambda b: screen_many(b, "mask"), items),
        "scan_us_per_turn": per_text_us(mask_secrets, turns),
        "turns_reaching_detectors": len(reached) / len(turns),
        "turns_changed": sum(1 for t in turns if mask_secrets(t)[1]) / len(turns),
    }


async def write_many_ab(url: str, turns: list[str], writes: int, rounds: int) -> dict[str, Any]:
    """Writes/s of ``write_many(500)`` with ``secrets=mask`` and ``keep``, alternating."""
    rates: dict[str, list[float]] = {"keep": [], "mask": []}
    clients = {
        policy: AsyncMemoryClient(bench_settings(url, embedder="hash", secrets=policy))
        for policy in rates
    }
    for client in clients.values():
        await client.connect()
    try:
        for n in range(rounds):
            for policy in ("keep", "mask") if n % 2 == 0 else ("mask", "keep"):
                client = clients[policy]
                start = time.perf_counter()
                for first in range(0, writes, BATCH):
                    batch = [{"content": turns[(first + k) % len(turns)]} for k in range(BATCH)]
                    await client.write_many(batch)
                rates[policy].append(writes / (time.perf_counter() - start))
                await client.redis.delete(client.keys.stream)
    finally:
        for client in clients.values():
            await client.aclose()
    keep, mask = statistics.median(rates["keep"]), statistics.median(rates["mask"])
    return {"keep": keep, "mask": mask, "mask_vs_keep": ratio(mask, keep), "rounds": rates}


def run(args: argparse.Namespace) -> dict[str, Any]:
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line]
    turns = locomo.texts()
    figures: dict[str, Any] = {"accuracy": accuracy(rows), "speed": speed(rows, turns)}
    writes = args.writes or (2_000 if args.quick else 20_000)
    rounds = args.rounds or (2 if args.quick else 10)
    with embedded_redis() as url:
        figures["write_many"] = asyncio.run(write_many_ab(url, turns, writes, rounds))
    report(figures)
    return figures


def report(figures: dict[str, Any]) -> None:
    """The tables, in markdown."""
    acc, fast, ab = figures["accuracy"], figures["speed"], figures["write_many"]
    print(f"\n## Labelled set: {acc['secrets']} secrets, {acc['look_alikes']} look-alikes\n")
    print(f"- recall {acc['recall']:.3f} (target >= 0.95)")
    print(f"- false positives {acc['false_positives']:.1%} (target <= 3%)")
    print("\n| group | texts | right |\n|---|---:|---:|")
    for group, row in acc["by_group"].items():
        print(f"| {group} | {row['n']} | {row['right']:.2f} |")
    for label, texts in (("missed", acc["missed"]), ("changed", acc["changed"])):
        for text in texts:
            print(f"- {label}: {text}")
    print("\n## Speed (us per text)\n")
    print("| what | us |\n|---|---:|")
    print(f"| whole scan, the set's texts | {fast['scan_us_per_set_text']:.1f} |")
    print(f"| LoCoMo turn: the cheap look | {fast['look_us_per_turn']:.2f} |")
    print(f"| LoCoMo turn: the look, in batches of 500 | {fast['batch_look_us_per_turn']:.2f} |")
    print(f"| LoCoMo turn: screened as write_many does | {fast['batch_screen_us_per_turn']:.2f} |")
    print(f"| LoCoMo turn: whole scan, one by one | {fast['scan_us_per_turn']:.2f} |")
    print(f"\n- turns reaching the detectors {fast['turns_reaching_detectors']:.2%}")
    print(f"- turns changed {fast['turns_changed']:.2%}")
    print("\n## write_many(500), writes/s (median of alternating rounds)\n")
    print(f"- keep (no scan) {ab['keep']:,.0f}, mask {ab['mask']:,.0f}: {ab['mask_vs_keep']:.1%}")
