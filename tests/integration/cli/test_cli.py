"""The operators' CLI, end to end against the session's Redis."""

from __future__ import annotations

import json

import pytest

from hindsight_redis.cli import main
from hindsight_redis.settings import Settings


def _json(capsys: pytest.CaptureFixture[str]) -> object:
    return json.loads(capsys.readouterr().out)


def test_write_worker_search_get_forget_stats(
    cli_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "write",
                "Deploy of billing-service-v2 failed with ERR_CONN_RESET",
                "--agent-id",
                "coder",
            ]
        )
        == 0
    )
    receipt = _json(capsys)
    assert isinstance(receipt, dict) and receipt["status"] == "accepted"
    assert main(["write", "ok thanks"]) == 0
    capsys.readouterr()
    assert main(["worker", "--burst"]) == 0
    report = _json(capsys)
    assert isinstance(report, dict) and report["indexed"] == 1 and report["dropped"] == 1
    assert main(["search", "ERR_CONN_RESET", "--mode", "keyword", "--json"]) == 0
    hits = _json(capsys)
    assert isinstance(hits, list) and hits[0]["id"] == receipt["id"]
    assert main(["search", "ERR_CONN_RESET", "--mode", "keyword"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["#", "fused", "vec", "kw", "ctx", "agent", "age", "memory"]
    assert table[1].split()[:2] == ["1", "1.00"] and "coder" in table[1]
    assert "ERR_CONN_RESET" in table[1]
    assert main(["get", receipt["id"]]) == 0
    assert _json(capsys)["agent_id"] == "coder"  # type: ignore[index]
    assert main(["forget", receipt["id"]]) == 0
    assert _json(capsys)["status"] == "archived"  # type: ignore[index]
    assert main(["get", "f" * 32]) == 2  # as forget, restore and protect: one message, exit 2
    assert capsys.readouterr().err.startswith(f"error: no memory '{'f' * 32}' in namespace")
    assert main(["stats", "--json"]) == 0
    stats = _json(capsys)
    assert isinstance(stats, dict) and stats["dropped"]["rule:ack"] == 1 and stats["backlog"] == 0
    assert main(["stats"]) == 0
    lines = dict(
        line.split(None, 1) for line in capsys.readouterr().out.splitlines() if line[:1] != " "
    )
    assert lines["accepted"] == "2" and lines["dropped"] == "1  (rule:ack 1)"


def test_dead_letters_list_and_replay(
    cli_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    import redis.asyncio as aioredis

    from hindsight_redis.core.keys import Keys

    keys = Keys(cli_env.key_prefix, cli_env.namespace)

    async def poison() -> None:
        client = aioredis.Redis.from_url(str(cli_env.redis_url))
        await client.xadd(keys.stream, {b"e": b"\xc1"})
        await client.aclose()

    asyncio.run(poison())
    assert main(["worker", "--burst"]) == 0
    capsys.readouterr()
    assert main(["dlq", "list"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["id", "failed", "(UTC)", "tries", "error", "write"]
    assert "PoisonMessage" in table[1] and table[-1].startswith("retry: hindsight-redis dlq")
    assert main(["dlq", "list", "--json"]) == 0
    letters = _json(capsys)
    assert (
        isinstance(letters, list) and len(letters) == 1 and "PoisonMessage" in letters[0]["error"]
    )
    assert main(["dlq", "replay"]) == 0
    assert "replayed 1" in capsys.readouterr().out


def test_bad_input_is_a_clear_error(cli_env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["write", "   "]) == 2
    assert "content must not be empty" in capsys.readouterr().err
    assert main(["search", "x", "--top-k", "0"]) == 2
    assert "top_k" in capsys.readouterr().err


def test_worker_roles_ingest_then_refine(
    cli_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["write", "Erin moved the standup to 9:30 on Tuesdays"]) == 0
    capsys.readouterr()
    assert main(["worker", "--burst", "--role", "ingest"]) == 0
    report = _json(capsys)
    assert isinstance(report, dict) and report["indexed"] == 1 and report["refined"] == 0
    assert main(["stats"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["refine"].split()[:5] == ["pending", "1", "(the", "oldest", "waits"]
    assert main(["worker", "--burst", "--role", "refine"]) == 0
    report = _json(capsys)
    assert isinstance(report, dict) and report["indexed"] == 0 and report["refined"] == 1
    with pytest.raises(SystemExit) as exited:
        main(["worker", "--role", "reader"])
    assert exited.value.code == 2 and "invalid choice: 'reader'" in capsys.readouterr().err
