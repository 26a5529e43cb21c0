"""``hindsight-redis eval`` as real processes: the report, --json, --fail-under's exit codes,
--compare, --self, and a bad golden file as one line naming its line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hindsight_redis import MemoryClient, Settings, Worker

CLI = [sys.executable, "-m", "hindsight_redis.cli"]
TEXTS = {
    "t1": "The billing-service deploy window is Tuesday 14:00 to 16:00 UTC",
    "t2": "The staging Postgres cluster moved to eu-west-1 on March 14",
    "t3": "Bob's cat Miso needs insulin twice a day at 8am and 8pm",
}
GOLDEN = [
    {"query": "billing deploy window", "relevant_sources": ["t1"], "tags": ["ops"]},
    {"query": "Postgres staging region", "relevant_sources": ["t2"], "tags": ["ops"]},
    {"query": "insulin for Miso", "relevant_sources": ["t3"], "tags": ["pets"]},
    {"query": "the Lisbon offsite agenda", "relevant_sources": ["t9"], "tags": ["pets"]},
]


def _run(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **settings.to_env()}
    return subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _pool(settings: Settings, tmp_path: Path) -> Path:
    with MemoryClient(settings) as client:
        client.write_many([{"content": text, "source": s} for s, text in TEXTS.items()])
    Worker(settings).run(burst=True)
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in GOLDEN), encoding="utf-8")
    return path


def test_eval_prints_the_report_and_fail_under_sets_the_exit_code(
    settings: Settings, tmp_path: Path
) -> None:
    golden = _pool(settings, tmp_path)
    shown = _run(settings, "eval", str(golden), "--k", "3", "--mode", "keyword")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "4 questions, keyword search, k=3" in out
    assert "recall@3" in out and "nDCG@3" in out and "search p50 / p99" in out
    rows = {line.split()[0] + line.split()[1]: line.split() for line in out.splitlines()[2:5]}
    assert rows["all4"][2] == "0.750" and rows["tagops"][3] == "1.000"
    assert "questions that found nothing in the top 3 (1):" in out
    assert "the Lisbon offsite agenda" in out
    met = _run(settings, "eval", str(golden), "--k", "3", "--fail-under", "recall=0.75,hit=0.5")
    assert met.returncode == 0 and met.stderr == ""
    unmet = _run(settings, "eval", str(golden), "--k", "3", "--fail-under", "recall=0.8")
    assert unmet.returncode == 1
    assert unmet.stderr.strip() == "below --fail-under: recall 0.750 < 0.800"


def test_eval_json_and_compare(settings: Settings, tmp_path: Path) -> None:
    golden = _pool(settings, tmp_path)
    first = _run(settings, "eval", str(golden), "--k", "1", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["kind"] == "golden" and report["k"] == 1
    assert report["overall"]["questions"] == 4 and set(report["by_tag"]) == {"ops", "pets"}
    assert report["missed"][-1]["line"] == 4
    before = tmp_path / "before.json"
    before.write_text(first.stdout, encoding="utf-8")
    shown = _run(settings, "eval", str(golden), "--k", "3", "--compare", str(before))
    assert shown.returncode == 0, shown.stderr
    assert f"since {before}:" in shown.stdout
    assert any(line.split()[0] == "recall" for line in shown.stdout.splitlines() if line)
    both = _run(settings, "eval", str(golden), "--compare", str(before), "--json")
    compared = json.loads(both.stdout)["compared_with"]
    assert compared["recall"]["before"] == report["overall"]["recall"]
    assert compared["recall"]["change"] == compared["recall"]["now"] - compared["recall"]["before"]


def test_eval_self_samples_the_pool(settings: Settings, tmp_path: Path) -> None:
    _pool(settings, tmp_path)
    shown = _run(settings, "eval", "--self", "3", "--k", "2", "--seed", "1", "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["kind"] == "self" and report["overall"]["questions"] == 3
    assert report["overall"]["hit"] == 1.0
    text = _run(settings, "eval", "--self", "3", "--k", "2")
    assert "self-check: 3 sampled memories" in text.stdout and "self-hit@2" in text.stdout


def test_mistakes_are_one_line_and_exit_2(settings: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "a", "relevant": ["x"]}\n{"query": "b"}\n', encoding="utf-8")
    cases = [
        (["eval", str(bad)], f"error: {bad}, line 2: name what answers it"),
        (["eval", str(tmp_path / "none.jsonl")], "error: cannot read golden file"),
        (["eval"], "error: eval takes a golden FILE or --self N"),
        (["eval", str(bad), "--self", "3"], "error: eval takes a golden FILE or --self N"),
        (["eval", str(bad), "--fail-under", "precision=1"], "error: --fail-under takes"),
        (["eval", str(bad), "--k", "0"], "error: top_k"),
        (["eval", str(bad), "--compare", str(bad)], "error: cannot read report"),
        (["eval", "--self", "0"], "error: the sample is from 1"),
    ]
    for args, says in cases:
        done = _run(settings, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith(says), (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
