"""The backup and restore drill, on embedded servers of the test's own: write, back up,
write more, restore into a fresh data dir, and find exactly what was backed up; workers
resume from the restored streams, without reprocessing or losing an entry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.cli import main
from hindsight_redis.core.keys import Keys
from hindsight_redis.index.upgrade import DATA_FORMAT_VERSION
from hindsight_redis.redis.server import EmbeddedServer, ServerState, get_profile
from tests.integration.helpers import wait_pid_gone

FACTS = [
    f"{who} moved the {what} review to {day} at {hour}:00"
    for who, what, day, hour in zip(
        ["Alice", "Bob", "Carol", "Dmitri", "Eve", "Farid", "Grace", "Hana", "Ivan", "Jun"] * 3,
        ["budget", "security", "design", "hiring", "roadmap", "pricing"] * 5,
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"] * 6,
        [9, 10, 11, 14, 15, 16] * 5,
        strict=True,
    )
]
QUERIES = ["budget review", "who moved the security review", "Thursday at 14:00", "Carol design"]


def _settings(state: ServerState, data: Path) -> Settings:
    return Settings(
        redis_url=state.url,
        key_prefix="drill",
        namespace="team",
        profile="balanced",
        embedder="hash",
        contextual_embedder="none",
        server_dir=data,
        worker_block_ms=50,
        claim_idle_ms=500,
    )


def _cli(*args: str | Path) -> int:
    return main([str(a) for a in args])


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """Data dirs of the original server (started, profile balanced) and of the restore;
    whatever runs in them at the end is stopped."""
    for name in ("HINDSIGHT_REDIS_URL", "HINDSIGHT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HINDSIGHT_KEY_PREFIX", "drill")
    monkeypatch.setenv("HINDSIGHT_NAMESPACE", "team")
    dirs = {"first": tmp_path / "first", "second": tmp_path / "second", "out": tmp_path / "bk"}
    assert (
        _cli(
            "server",
            "start",
            "--server-dir",
            dirs["first"],
            "--redis-port",
            0,
            "--profile",
            "balanced",
        )
        == 0
    )
    try:
        yield dirs
    finally:
        for data in (dirs["first"], dirs["second"]):
            server = EmbeddedServer(data, get_profile("balanced"))
            state = server.state()
            if state is not None:
                server.stop()
                wait_pid_gone(state.pid)


def _state(data: Path) -> ServerState:
    state = EmbeddedServer(data, get_profile("balanced")).state()
    assert state is not None, f"no server runs in {data}"
    return state


async def _results(client: AsyncMemoryClient) -> dict[str, list[str]]:
    return {q: [hit.id for hit in await client.search(q, top_k=10)] for q in QUERIES}


async def test_backup_then_more_writes_then_restore_gives_back_exactly_the_backup(
    servers: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first = _settings(_state(servers["first"]), servers["first"])
    keys = Keys("drill", "team")
    plain = redis.Redis.from_url(str(first.redis_url))
    async with AsyncMemoryClient(first) as client:
        indexed = await client.write_many([{"content": f} for f in FACTS[:20]])
        await Worker(first, name="before").run_async(burst=True)
        # Unprocessed at backup time: some delivered to a worker that died before its
        # commit (pending), some never delivered.
        pending = await client.write_many([{"content": f} for f in FACTS[20:23]])
        held = plain.xreadgroup(keys.group, "died", {keys.stream: ">"}, count=3)
        assert len(held[0][1]) == 3
        fresh = await client.write_many([{"content": f} for f in FACTS[23:27]])
        searched = await _results(client)
        assert all(searched.values())
        groups = plain.xinfo_groups(keys.stream)
        capsys.readouterr()
        assert (
            await asyncio.to_thread(
                _cli, "backup", "--out", servers["out"], "--server-dir", servers["first"]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "20 memories" in out and "3 pending" in out, out
        manifest = json.loads((servers["out"] / "manifest.json").read_text())
        assert manifest["quiescent"] and manifest["namespaces"]["team"]["memories"] == 20
        assert manifest["namespaces"]["team"]["data_format"] == DATA_FORMAT_VERSION
        assert manifest["indexes"] == [keys.index_name(1)]
        assert {"dump.rdb", "indexes.json", "server.json", "profile"} <= {
            p.name for p in servers["out"].iterdir()
        }
        # Life goes on after the backup: more writes, all processed.
        later = await client.write_many([{"content": f} for f in FACTS[27:]])
        await Worker(first, name="after").run_async(burst=True)
        assert (await client.stats())["processed"] == 30
    plain.close()

    capsys.readouterr()
    assert (
        await asyncio.to_thread(
            _cli, "restore", servers["out"], "--server-dir", servers["second"], "--redis-port", 0
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "every index is back and every namespace is as backed up" in out, out
    second = _settings(_state(servers["second"]), servers["second"])
    assert second.redis_url != first.redis_url
    restored = redis.Redis.from_url(str(second.redis_url))
    async with AsyncMemoryClient(second) as client:
        # Exactly the memories of the backup, found as they were.
        assert await _results(client) == searched
        assert all([await client.get(r.id) for r in indexed])
        assert not any([await client.get(r.id) for r in [*pending, *fresh, *later]])
        assert restored.xinfo_groups(keys.stream) == groups  # as backed up, pending entries too
        # Workers resume: the pending entries reclaimed, the new ones read, nothing twice.
        report = await Worker(second, name="resumed").run_async(burst=True)
        assert report.indexed == len(pending) + len(fresh), report
        stats = await client.stats()
        assert stats["processed"] == stats["accepted"] == 27 and stats["pending"] == 0, stats
        assert stats["dead_letters"] == 0
        assert all([await client.get(r.id) for r in [*indexed, *pending, *fresh]])
        assert not any([await client.get(r.id) for r in later])
        docs = [k async for k in client.redis.scan_iter(match=f"{keys.doc_prefix}*")]
        assert len(docs) == 27
    restored.close()
    # The restored data is the server's own now (its AOF written): it survives a restart.
    assert _cli("server", "stop", "--server-dir", servers["second"]) == 0
    assert _cli("server", "start", "--server-dir", servers["second"], "--redis-port", 0) == 0
    again = redis.Redis.from_url(_state(servers["second"]).url)
    assert again.config_get("appendonly")["appendonly"] == "yes"
    assert len(list(again.scan_iter(match=f"{keys.doc_prefix}*"))) == 27
    again.close()


def test_backup_and_restore_refuse_what_they_cannot_do_safely(
    servers: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, second = servers["out"], servers["second"]
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert _cli("backup", "--out", out, "--server-dir", servers["first"]) == 2
    assert "is not an empty directory" in capsys.readouterr().err
    assert _cli("backup", "--out", tmp_path / "none", "--server-dir", tmp_path / "nothing") == 2
    assert "is not running" in capsys.readouterr().err
    assert _cli("backup", "--out", tmp_path / "c", "--redis-url", "redis+cluster://h:7000") == 2
    assert "node by node" in capsys.readouterr().err
    (out / "notes.txt").unlink()
    assert _cli("backup", "--out", out, "--server-dir", servers["first"]) == 0
    # An external Redis whose files are on this machine (here: the same server, by URL).
    url = _state(servers["first"]).url
    capsys.readouterr()
    assert _cli("backup", "--out", tmp_path / "ext", "--redis-url", url, "--json") == 0
    external = json.loads(capsys.readouterr().out)
    assert external["source"]["data_dir"] == str(servers["first"])
    # Restore: only into a fresh data dir, unless --force moves what is there aside.
    second.mkdir()
    (second / "dump.rdb").write_text("older data")
    capsys.readouterr()
    assert _cli("restore", out, "--server-dir", second, "--redis-port", 0) == 2
    assert "is not empty" in capsys.readouterr().err
    assert _cli("restore", out, "--server-dir", second, "--redis-port", 0, "--force") == 0
    aside = [p for p in second.iterdir() if p.name.startswith("before-restore-")]
    assert len(aside) == 1 and (aside[0] / "dump.rdb").read_text() == "older data"
    capsys.readouterr()
    assert _cli("restore", out, "--server-dir", second, "--redis-port", 0, "--force") == 2
    assert "stop that one first" in capsys.readouterr().err  # --force never stops a server
    with open(out / "dump.rdb", "ab") as handle:
        handle.write(b"x")
    capsys.readouterr()
    assert _cli("restore", out, "--server-dir", tmp_path / "fourth", "--redis-port", 0) == 2
    assert "missing or damaged" in capsys.readouterr().err
    assert _cli("restore", tmp_path / "nowhere", "--server-dir", tmp_path / "fifth") == 2
    assert "is not a backup of hindsight-redis" in capsys.readouterr().err
