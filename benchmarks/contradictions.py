"""How well the offline conflict judge tells contradictions from restatements.

Reads labelled pairs (JSON lines: ``label`` contradiction | restatement |
unrelated, ``lang``, ``kind`` for contradictions, ``old``, ``new``; default
tests/data/contradictions.jsonl) and prints, for the heuristic judge
(``pipeline.facts``): recall on contradictions, the share of restatements
and of unrelated pairs wrongly flagged, per language and per kind; and how
many contradictions the dedup stage's cosine gate (``conflict_threshold``,
static embedder) lets through to the judge at all.

    python benchmarks/contradictions.py [--data FILE] [--show-misses]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from hindsight_redis.pipeline.facts import contradiction
from hindsight_redis.providers.embedders import LocalEmbedder
from hindsight_redis.settings import Settings

DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "data" / "contradictions.jsonl"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    flagged = [bool(contradiction(p["new"], p["old"])) for p in pairs]
    total: Counter[tuple[str, str]] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    for pair, flag in zip(pairs, flagged, strict=True):
        for lang in (pair["lang"], "all"):
            total[(pair["label"], lang)] += 1
            hits[(pair["label"], lang)] += flag
    print(f"{args.data.name}: {len(pairs)} pairs")
    print("| | all | en | zh |")
    print("|---|---:|---:|---:|")
    for label, what in (
        ("contradiction", "contradictions flagged (recall)"),
        ("restatement", "restatements wrongly flagged"),
        ("unrelated", "unrelated pairs wrongly flagged"),
    ):
        cells = [_share(hits[(label, lang)], total[(label, lang)]) for lang in ("all", "en", "zh")]
        print(f"| {what} | " + " | ".join(cells) + " |")
    flagged_all = sum(flagged)
    correct = sum(f for f, p in zip(flagged, pairs, strict=True) if p["label"] == "contradiction")
    print(f"precision: {correct}/{flagged_all} ({correct / max(flagged_all, 1):.0%})")
    kinds: Counter[str] = Counter(p["kind"] for p in pairs if p["label"] == "contradiction")
    caught: Counter[str] = Counter(
        p["kind"]
        for p, f in zip(pairs, flagged, strict=True)
        if f and p["label"] == "contradiction"
    )
    print("per kind: " + ", ".join(f"{k} {caught[k]}/{n}" for k, n in sorted(kinds.items())))
    embedder = LocalEmbedder()
    olds = embedder.embed_sync([p["old"] for p in pairs if p["label"] == "contradiction"])
    news = embedder.embed_sync([p["new"] for p in pairs if p["label"] == "contradiction"])
    cosines = (olds * news).sum(axis=1)
    gate = Settings().conflict_threshold
    print(
        f"cosine of contradicting pairs (static embedder): min {cosines.min():.2f}, median "
        f"{np.median(cosines):.2f}; judged at conflict_threshold {gate}: "
        f"{int((cosines >= gate).sum())}/{len(cosines)} (at 0.9: {int((cosines >= 0.9).sum())})"
    )
    if args.show_misses:
        for pair, flag in zip(pairs, flagged, strict=True):
            if flag != (pair["label"] == "contradiction"):
                kind = pair.get("kind", "")
                print(f"  {pair['label']:>13} {kind:>12}: {pair['old']} | {pair['new']}")


if __name__ == "__main__":
    main()
