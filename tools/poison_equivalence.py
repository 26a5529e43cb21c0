"""Whether ``trust.poisoning.scan`` gives the verdicts another revision gives, and how fast.

    python tools/poison_equivalence.py [--base main] [--sentences 30000] [--time 3] [--callgrind]

Exports ``hindsight_redis`` of ``--base`` (``git archive``) to a temporary directory,
scans every text there and here (each in a process of its own, the package imported by
path) and counts the texts whose verdict (risk, kind, evidence) differs: every LoCoMo
turn (``HINDSIGHT_LOCOMO``), every text of tests/data poisoning*, secrets* and
contradictions.jsonl, memories of ``benchmarks.locomo.Sentences`` (seeded), and each of
those poisoning and secret texts spelled otherwise (upper-cased, Turkish dotted and
dotless i, full-width letters: what case folding and ``normalize`` meet). ``--time``:
the CPU time per LoCoMo turn of each, in alternating processes; ``--callgrind``: the
instructions per LoCoMo turn of each (valgrind: the same on a busy machine). Exits 1 on a
difference.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
_VERDICTS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from hindsight_redis.trust.poisoning import scan
texts = json.load(open(sys.argv[2]))
json.dump([[v.risk, v.kind, v.evidence] for v in map(scan, texts)], open(sys.argv[3], "w"))
"""
_TIMING = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from hindsight_redis.trust.poisoning import scan
texts = json.load(open(sys.argv[2]))
for text in texts:
    scan(text)
best = float("inf")
for _ in range(int(sys.argv[3])):  # 0 under callgrind: the warm-up pass alone
    start = time.process_time()
    for text in texts:
        scan(text)
    best = min(best, time.process_time() - start)
print(best / len(texts) * 1e6 if best < float("inf") else 0.0)
"""
_FULL_WIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}


def texts(sentences: int) -> dict[str, list[str]]:
    """Every text to compare, by where it comes from."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import locomo

    found: dict[str, list[str]] = {"locomo turns": locomo.texts()}
    for pattern in ("poisoning*.jsonl", "secrets*.jsonl", "contradictions.jsonl"):
        for path in sorted(DATA.glob(pattern)):
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            found[path.name] = [r[k] for r in rows for k in ("text", "old", "new") if k in r]
    rng = random.Random(20261204)
    generator = locomo.Sentences()
    found["locomo.Sentences"] = [generator.text(rng) for _ in range(sentences)]
    labelled = [t for name, ts in found.items() if name.endswith(".jsonl") for t in ts]
    found["spelled otherwise"] = [
        variant
        for text in labelled
        for variant in (
            text.upper(),
            text.replace("i", "ı").replace("I", "İ"),
            text.translate(_FULL_WIDTH),
        )
    ]
    return found


def export(revision: str, into: Path) -> Path:
    """``hindsight_redis`` of ``revision``, written under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "hindsight_redis"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def verdicts(tree: Path, sample: Path, out: Path) -> list[list[object]]:
    """The verdicts of ``tree``'s scan on the texts in ``sample``."""
    subprocess.run([sys.executable, "-c", _VERDICTS, str(tree), str(sample), str(out)], check=True)
    loaded: list[list[object]] = json.loads(out.read_text())
    return loaded


def cpu_us(tree: Path, sample: Path, repeats: int) -> float:
    """The least CPU time per text of ``tree``'s scan over ``sample`` (``repeats`` passes)."""
    run = [sys.executable, "-c", _TIMING, str(tree), str(sample), str(repeats)]
    return float(subprocess.run(run, check=True, capture_output=True, text=True).stdout)


def instructions(tree: Path, sample: Path) -> float:
    """The instructions per text of ``tree``'s scan over ``sample`` (callgrind: a run with two
    more passes than another, the difference halved)."""
    counts = []
    for passes in (0, 2):
        out = sample.with_suffix(f".{passes}.callgrind")
        run = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable]
        run += ["-c", _TIMING.replace("process_time", "perf_counter"), str(tree), str(sample)]
        subprocess.run([*run, str(passes)], check=True, capture_output=True)
        summary = [line for line in out.read_text().splitlines() if line.startswith("summary:")]
        counts.append(int(summary[0].split()[1]))
    texts_ = len(json.loads(sample.read_text()))
    return (counts[1] - counts[0]) / 2 / texts_


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="the revision to compare against")
    parser.add_argument("--sentences", type=int, default=30000, help="generated memories")
    parser.add_argument("--time", type=int, default=0, help="alternating timing rounds")
    parser.add_argument("--repeats", type=int, default=5, help="passes per timing round")
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    args = parser.parse_args()
    found = texts(args.sentences)
    every = [t for ts in found.values() for t in ts]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = export(args.base, work / "base")
        (work / "texts.json").write_text(json.dumps(every))
        before = verdicts(base, work / "texts.json", work / "before.json")
        after = verdicts(ROOT, work / "texts.json", work / "after.json")
        differ = 0
        at = 0
        for name, ts in found.items():
            pairs = list(zip(before[at : at + len(ts)], after[at : at + len(ts)], strict=True))
            wrong = [(t, b, a) for t, (b, a) in zip(ts, pairs, strict=True) if b != a]
            differ += len(wrong)
            at += len(ts)
            print(f"{name}: {len(ts)} texts, {len(wrong)} verdicts differ")
            for text, b, a in wrong[:5]:
                print(f"  {b} -> {a}: {text[:100]!r}")
        print(f"all: {len(every)} texts, {differ} verdicts differ")
        if args.time:
            (work / "turns.json").write_text(json.dumps(found["locomo turns"]))
            for n in range(args.time):
                old = cpu_us(base, work / "turns.json", args.repeats)
                new = cpu_us(ROOT, work / "turns.json", args.repeats)
                print(
                    f"round {n + 1}: {old:.1f} -> {new:.1f} us per LoCoMo turn ({old / new:.2f}x)"
                )
        if args.callgrind:
            (work / "turns.json").write_text(json.dumps(found["locomo turns"]))
            old, new = (instructions(t, work / "turns.json") for t in (base, ROOT))
            print(f"callgrind: {old:,.0f} -> {new:,.0f} instructions per LoCoMo turn")
            print(f"  ({old / new:.2f}x fewer)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
