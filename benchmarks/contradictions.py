"""How well the offline conflict judge tells contradictions from restatements.

Reads labelled pairs (JSON lines: ``label`` contradiction | restatement | unrelated,
``lang``, ``kind`` for contradictions, ``old``, ``new``; default
tests/data/contradictions.jsonl) and reports, for the heuristic judge (``pipeline.facts``):
recall on contradictions, the share of restatements and of unrelated pairs wrongly flagged,
per language and per kind; and how many contradictions the dedup stage's cosine gate
(``conflict_threshold``, static embedder) lets through to the judge at all. Targets: recall
at least 0.9, at most 10% of restatements flagged.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_redis import Settings
from hindsight_redis.language.facts import contradiction
from hindsight_redis.providers.embedders import LocalEmbedder

SUMMARY = "the offline conflict judge: recall on contradictions, restatements wrongly flagged"
DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "data" / "contradictions.jsonl"
LABELS = {
    "contradiction": "contradictions flagged (recall)",
    "restatement": "restatements wrongly flagged",
    "unrelated": "unrelated pairs wrongly flagged",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=DEFAULT, help="labelled pairs (JSON lines)")
    parser.add_argument("--show-misses", action="store_true")


def run(args: argparse.Namespace) -> dict[str, Any]:
    pairs = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    flagged = [bool(contradiction(p["new"], p["old"])) for p in pairs]
    total: Counter[tuple[str, str]] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    for pair, flag in zip(pairs, flagged, strict=True):
        for lang in (pair["lang"], "all"):
            total[(pair["label"], lang)] += 1
            hits[(pair["label"], lang)] += flag
    shares = {
        label: {
            lang: hits[(label, lang)] / total[(label, lang)]
            for lang in ("all", "en", "zh")
            if total[(label, lang)]
        }
        for label in LABELS
    }
    contradicting = [p for p in pairs if p["label"] == "contradiction"]
    kinds = Counter(p["kind"] for p in contradicting)
    caught = Counter(
        p["kind"]
        for p, f in zip(pairs, flagged, strict=True)
        if f and p["label"] == "contradiction"
    )
    embedder = LocalEmbedder()
    olds = embedder.embed_sync([p["old"] for p in contradicting])
    news = embedder.embed_sync([p["new"] for p in contradicting])
    cosines = (olds * news).sum(axis=1)
    gate = Settings().conflict_threshold
    figures = {
        "pairs": len(pairs),
        "shares": shares,
        "precision": hits[("contradiction", "all")] / max(sum(flagged), 1),
        "per_kind": {k: f"{caught[k]}/{n}" for k, n in sorted(kinds.items())},
        "cosine_min": float(cosines.min()),
        "cosine_median": float(np.median(cosines)),
        "judged_at_the_gate": f"{int((cosines >= gate).sum())}/{len(cosines)} (gate {gate})",
    }
    print(f"{args.data.name}: {len(pairs)} pairs\n\n| | all | en | zh |\n|---|---:|---:|---:|")
    for label, what in LABELS.items():
        cells = [f"{hits[(label, lang)]}/{total[(label, lang)]}" for lang in ("all", "en", "zh")]
        print(f"| {what} | " + " | ".join(cells) + " |")
    print(f"precision {figures['precision']:.0%}; per kind: {figures['per_kind']}")
    print(
        f"cosine of contradicting pairs (static embedder): min {figures['cosine_min']:.2f}, "
        f"median {figures['cosine_median']:.2f}; judged: {figures['judged_at_the_gate']}"
    )
    if args.show_misses:
        for pair, flag in zip(pairs, flagged, strict=True):
            if flag != (pair["label"] == "contradiction"):
                kind = pair.get("kind", "")
                print(f"  {pair['label']:>13} {kind:>12}: {pair['old']} | {pair['new']}")
    return figures
