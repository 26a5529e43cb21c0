"""Forgetting from the command line: protect, forget, sweep, export, purge, import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_redis.cli import main
from hindsight_redis.settings import Settings
from tests.integration.lifecycle.test_forgetting import facts


def _write_all(items: list[dict[str, object]], capsys: pytest.CaptureFixture[str]) -> list[str]:
    ids = []
    for item in items:
        extra = ["--protected"] if item.get("protected") else []
        assert main(["write", str(item["content"]), "--half-life-days", "30", *extra]) == 0
        ids.append(json.loads(capsys.readouterr().out)["id"])
    assert main(["worker", "--burst"]) == 0
    capsys.readouterr()
    return ids


def _stats(capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    assert main(["stats", "--json"]) == 0
    memories: dict[str, int] = json.loads(capsys.readouterr().out)["memories"]
    return memories


def test_protect_forget_sweep_export_purge_import(
    cli_env: Settings,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    ids = _write_all(facts(1, protected=True) + facts(9, start=1), capsys)
    guarded = ids[0]
    assert main(["get", ids[1]]) == 0
    assert json.loads(capsys.readouterr().out)["half_life_days"] == 30

    assert main(["forget", guarded]) == 2
    assert "protected" in capsys.readouterr().err and _stats(capsys)["archived"] == 0

    assert main(["sweep", "--max-active", "4", "--dry-run"]) == 0
    table = capsys.readouterr().out
    assert "would archive 6 of 10" in table and "score" in table.splitlines()[2]
    assert _stats(capsys) == {"active": 10, "archived": 0, "protected": 1}

    assert main(["sweep", "--max-active", "4"]) == 0
    assert "archived 6 of 10" in capsys.readouterr().out
    assert _stats(capsys) == {"active": 4, "archived": 6, "protected": 1}
    assert main(["get", guarded]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "active"

    out = tmp_path / "cold.jsonl.gz"
    assert main(["export", "--out", str(out)]) == 0
    assert "exported 6 archived memories" in capsys.readouterr().out
    assert main(["purge", "--exported", str(out)]) == 0
    assert capsys.readouterr().out.startswith("removed 6;")
    assert _stats(capsys) == {"active": 4, "archived": 0, "protected": 1}
    assert main(["import", str(out)]) == 0
    assert "imported 6" in capsys.readouterr().out
    assert _stats(capsys) == {"active": 4, "archived": 6, "protected": 1}

    assert main(["search", "--json", "--include-archived", "service", "--top-k", "10"]) == 0
    archived = {
        h["id"]: h for h in json.loads(capsys.readouterr().out) if h["status"] == "archived"
    }
    some = next(iter(archived))
    assert main(["restore", some]) == 0
    capsys.readouterr()
    assert main(["get", some]) == 0
    content = json.loads(capsys.readouterr().out)["content"]
    assert main(["search", "--json", content]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == some
    assert main(["forget", guarded, "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "archived"
