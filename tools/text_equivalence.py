"""Checks that two trees score and read texts alike, and times both (standard library only).

Compares ``heuristic_score`` (score and reason) and ``facts_of`` (every field) of a
reference tree (default: the ``main`` branch, exported with ``git archive`` into a
temporary directory) against this tree, over

* every LoCoMo turn (``$HINDSIGHT_LOCOMO``),
* every string of every line of ``tests/data/*.jsonl``,
* 3,000 memories of ``benchmarks.locomo.Sentences`` (seed 0),
* ``benchmarks.locomo.derived_texts(5000)`` (the ingest benchmark's writes),

and prints how many texts were compared and every difference. It also runs the dedup
stage (``DedupStage.process``, the offline judge) over the turns and the derived writes
in batches of 256, each write's stored neighbours the 5 nearest earlier texts by the
``local`` embedder (Redis left out: the lookups are given), and compares every write's
outcome (merged into, conflicts, judged by, counters). Each tree runs in a subprocess of
its own, with only that tree on its path.

``--rounds N`` also times both: CPU microseconds per call (``time.process_time``, the
best of 5 passes), alternating the trees N times, on the unique turns and on the derived
writes apart (those repeat sentences: a cache gains there what unique text does not get).
Every cache of the scoring module is cleared before each pass, and ``facts_of`` is timed
without its own cache, so a pass never finds the previous pass's texts. The dedup stage
is timed per write with the facts of every text cached (``cached``: a worker's state
when the neighbours were written recently) and with the caches of ``facts`` cleared
before each batch (``cold``).

Run:  python tools/text_equivalence.py [--ref main] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_PASSES = 5
_DEDUP_SOURCES = ("turns", "derived")


def corpus(root: Path) -> dict[str, list[str]]:
    """The texts to compare, by source (read with ``root``'s benchmarks)."""
    sys.path.insert(0, str(root))
    from benchmarks import locomo

    data: list[str] = []
    for path in sorted((root / "tests" / "data").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                data.extend(_strings(json.loads(line)))
    sentences, rng = locomo.Sentences(), random.Random(0)
    return {
        "turns": locomo.texts(),
        "tests_data": data,
        "sentences": [sentences.text(rng) for _ in range(3000)],
        "derived": locomo.derived_texts(5000),
    }


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _facts_json(facts: Any) -> dict[str, Any]:
    return {
        "values": {kind: sorted(found) for kind, found in sorted(facts.values.items())},
        "words": sorted(facts.words),
        "negated": sorted(facts.negated),
        "sequence": list(facts.sequence),
        "tokens": list(facts.tokens),
    }


def dump(texts: dict[str, list[str]]) -> dict[str, list[Any]]:
    """Each text's score, reason and facts, by source (the tree on the path reads them)."""
    from hindsight_redis.language.facts import facts_of
    from hindsight_redis.pipeline.stages.scoring import heuristic_score

    found: dict[str, list[Any]] = {
        source: [[*heuristic_score(t), _facts_json(facts_of(t))] for t in items]
        for source, items in texts.items()
    }
    for source in _DEDUP_SOURCES:
        found[f"dedup {source}"] = asyncio.run(dedup(texts[source], 0))[0]
    return found


async def dedup(texts: list[str], passes: int) -> tuple[list[Any], dict[str, float]]:
    """Each write's dedup outcome, and (``passes`` > 0) the stage's CPU microseconds per
    write, the best of ``passes``, with the facts cached and cold."""
    import numpy as np

    from hindsight_redis.core.models import MemoryEvent
    from hindsight_redis.language import facts
    from hindsight_redis.pipeline.stages.base import Candidate
    from hindsight_redis.pipeline.stages.dedup import DedupStage
    from hindsight_redis.providers.embedders import LocalEmbedder
    from hindsight_redis.settings import DedupSettings

    vectors = np.asarray(LocalEmbedder().embed_sync(texts), dtype=np.float32)
    batches = [range(first, min(first + 256, len(texts))) for first in range(0, len(texts), 256)]
    stored = {}  # by batch: each write's 5 nearest earlier texts, as the lookups return them
    for batch in batches:
        earlier = vectors[: batch.start]
        rows = []
        for i in batch:
            sims = earlier @ vectors[i]
            top = np.argsort(-sims, kind="stable")[:5].tolist()
            rows.append([(f"m{j}", float(sims[j]), texts[j]) for j in top])
        stored[batch.start] = rows
    stage = DedupStage(None, None, DedupSettings(), None)  # type: ignore[arg-type]

    async def run(cold: bool) -> tuple[list[Any], float]:
        outcomes, cpu_s = [], 0.0
        for batch in batches:
            todo = [
                Candidate(
                    f"e{i}",
                    MemoryEvent(event_id=f"e{i}", namespace="ns", content=texts[i]),
                    texts[i],
                    embedding=vectors[i],
                )
                for i in batch
            ]

            async def lookups(_: Any, rows: Any = stored[batch.start]) -> Any:
                return rows

            stage._stored_neighbours = lookups  # type: ignore[method-assign,assignment]
            if cold:
                facts.facts_of.cache_clear()
                facts._raw_words.cache_clear()
            start = time.process_time()
            await stage.process(todo)
            cpu_s += time.process_time() - start
            outcomes += [
                [c.merge_into, c.conflicts_with, c.notes.get("judged_by"), c.counters] for c in todo
            ]
        return outcomes, cpu_s / len(texts) * 1e6

    outcomes, _ = await run(False)
    cpu = {
        state: min([(await run(state == "cold"))[1] for _ in range(passes)])
        for state in ("cached", "cold")
        if passes
    }
    return outcomes, cpu


def timings(texts: dict[str, list[str]]) -> dict[str, float]:
    """CPU microseconds per call of each function on the turns and the derived writes."""
    from hindsight_redis.language import facts
    from hindsight_redis.pipeline.stages import scoring

    caches = [f for f in vars(scoring).values() if callable(getattr(f, "cache_clear", None))]
    uncached_facts = getattr(facts.facts_of, "__wrapped__", facts.facts_of)
    out = {}
    for name, function in (
        ("heuristic_score", scoring.heuristic_score),
        ("facts_of", uncached_facts),
    ):
        for source in ("turns", "derived"):
            items = texts[source]
            for text in items:  # warm lazy loads (the tokenizer of _name_like)
                function(text)
            best = float("inf")
            for _ in range(_PASSES):
                for cache in caches:
                    cache.cache_clear()
                start = time.process_time()
                for text in items:
                    function(text)
                best = min(best, time.process_time() - start)
            out[f"{name} {source}"] = best / len(items) * 1e6
    for source in _DEDUP_SOURCES:
        for state, cpu_us in asyncio.run(dedup(texts[source], _PASSES))[1].items():
            out[f"dedup {source} ({state})"] = cpu_us
    return out


def _run(tree: Path, mode: str, texts_path: Path) -> Any:
    """This script's ``mode`` in a subprocess that imports ``tree``."""
    answer = subprocess.run(
        [sys.executable, __file__, f"--{mode}", str(tree), str(texts_path)],
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
    )
    return json.loads(answer.stdout)


def _export(ref: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def compare(
    before: dict[str, list[Any]], after: dict[str, list[Any]], texts: dict[str, list[str]]
) -> int:
    """Prints each text whose results differ; returns how many do."""
    differences = 0
    for source in before:
        items = texts[source.removeprefix("dedup ")]
        for text, old, new in zip(items, before[source], after[source], strict=True):
            if old != new:
                differences += 1
                print(f"DIFF [{source}] {text!r}\n  before: {old}\n  after:  {new}")
    return differences


def main() -> None:
    """Compare (and with ``--rounds``, time) the reference tree and this one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="git ref of the tree before (default main)")
    parser.add_argument("--rounds", type=int, default=0, help="timing rounds (0: no timing)")
    parser.add_argument("--dump", nargs=2, metavar=("TREE", "TEXTS"), help=argparse.SUPPRESS)
    parser.add_argument("--time", nargs=2, metavar=("TREE", "TEXTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump or args.time:
        tree, texts_path = args.dump or args.time
        sys.path.insert(0, tree)
        import hindsight_redis

        assert Path(hindsight_redis.__file__).is_relative_to(tree), hindsight_redis.__file__
        texts = json.loads(Path(texts_path).read_text(encoding="utf-8"))
        print(json.dumps(dump(texts) if args.dump else timings(texts)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        reference = Path(tmp) / "ref"
        reference.mkdir()
        _export(args.ref, reference)
        texts = corpus(ROOT)
        texts_path = Path(tmp) / "texts.json"
        texts_path.write_text(json.dumps(texts), encoding="utf-8")
        before, after = _run(reference, "dump", texts_path), _run(ROOT, "dump", texts_path)
        differences = compare(before, after, texts)
        counts = ", ".join(f"{len(items)} {source}" for source, items in texts.items())
        total = sum(len(items) for items in texts.values())
        print(
            f"compared {total} texts ({counts}), and the dedup outcomes of the turns and the "
            f"derived writes, against {args.ref}: {differences} differences"
        )
        if args.rounds:
            _time(reference, texts_path, args.ref, args.rounds)


def _time(reference: Path, texts_path: Path, ref: str, rounds: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for _ in range(rounds):  # alternating, so a busy spell of the host hits both
        runs["before"].append(_run(reference, "time", texts_path))
        runs["after"].append(_run(ROOT, "time", texts_path))
    print(f"CPU us per call, median of {rounds} alternating rounds (before = {ref}):")
    for key in runs["before"][0]:
        old = statistics.median(r[key] for r in runs["before"])
        new = statistics.median(r[key] for r in runs["after"])
        print(f"  {key:24s} {old:7.1f} -> {new:7.1f}  ({new / old:.2f}x)")


if __name__ == "__main__":
    main()
