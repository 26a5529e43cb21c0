"""What a new user meets in the first hour: remembered profiles, `up`, readable output, demo."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis as redis_sync

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.cli import main
from hindsight_redis.redis.server import EmbeddedServer, free_port, get_profile
from tests.integration.helpers import wait_for


def _waitaof_calls(url: str) -> int:
    with redis_sync.Redis.from_url(url) as redis:
        stats = redis.info("commandstats")
    return int(stats.get("cmdstat_waitaof", {}).get("calls", 0))


async def test_clients_take_the_profile_the_embedded_server_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = EmbeddedServer(tmp_path / "srv", get_profile("durable"), port=0)
    state = server.start()
    try:
        plain = Settings(
            server_dir=tmp_path / "srv", server_port=state.port, embedder="hash", key_prefix="p"
        )
        assert "profile" not in plain.model_fields_set
        async with AsyncMemoryClient(plain) as client:
            assert client.profile.name == "durable"
            before = _waitaof_calls(state.url)
            await client.write("The durable profile waits for the AOF fsync")
            assert _waitaof_calls(state.url) == before + 1
        explicit = plain.model_copy(update={"profile": "balanced"})
        with caplog.at_level(logging.WARNING):
            async with AsyncMemoryClient(explicit) as client:
                assert client.profile.name == "balanced"  # what was asked for, and said
                before = _waitaof_calls(state.url)
                await client.write("An explicit profile is used, with a warning")
                assert _waitaof_calls(state.url) == before
        warned = [r.getMessage() for r in caplog.records if "runs with profile" in r.getMessage()]
        assert len(warned) == 1 and "'durable'" in warned[0] and "'balanced'" in warned[0]
    finally:
        server.stop()


def _up(env: dict[str, str], port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hindsight_redis.cli",
            "up",
            "--workers",
            "1",
            "--mcp-port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp")
                return proc
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "up did not serve MCP"
                time.sleep(0.1)
    except BaseException:
        proc.kill()
        proc.communicate()  # reaps it and closes its stderr pipe
        raise


def _children(pid: int) -> list[int]:
    ps = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in ps.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return subprocess.run(
        ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True
    ).stdout.strip()[:1] not in ("Z", "")


def test_up_stopped_by_sigint_leaves_nothing_it_started(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HINDSIGHT_SERVER_DIR": str(tmp_path),
        "HINDSIGHT_EMBEDDER": "hash",
        "HINDSIGHT_SERVER_PORT": str(free_port()),
        "HINDSIGHT_PROFILE": "ephemeral",
    }
    env.pop("HINDSIGHT_REDIS_URL", None)
    proc = _up(env, free_port())
    redis_pid = json.loads((tmp_path / "server.json").read_text())["pid"]
    workers = _children(proc.pid)
    assert len(workers) == 1 and _alive(redis_pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)  # its stderr to the end, the pipe closed
    assert proc.returncode == 0
    assert "started now, stopped with the rest" in err and "Traceback" not in err
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in (redis_pid, *workers)):
        assert time.monotonic() < deadline, "a process `up` started outlived it"
        time.sleep(0.05)


def test_up_leaves_a_redis_it_did_not_start_running_and_says_so(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path, get_profile("ephemeral"), port=0)
    state = server.start()
    try:
        env = {
            **os.environ,
            "HINDSIGHT_SERVER_DIR": str(tmp_path),
            "HINDSIGHT_EMBEDDER": "hash",
            "HINDSIGHT_SERVER_PORT": str(state.port),
        }
        env.pop("HINDSIGHT_REDIS_URL", None)
        proc = _up(env, free_port())
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)  # its stderr to the end, the pipe closed
        assert proc.returncode == 0
        assert "was already running and stays up" in err and "server stop" in err
        assert server.state() is not None  # still answering
    finally:
        server.stop()


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    return settings


def test_write_reads_stdin_and_version_and_help_speak_to_users(
    cli_env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "Line one of a long report\nline two: the payments API returned 502s at 09:12"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text + "\n"))
    assert main(["write", "-", "--agent-id", "coder"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert main(["worker", "--burst"]) == 0
    capsys.readouterr()
    assert main(["get", receipt["id"]]) == 0
    assert json.loads(capsys.readouterr().out)["content"] == text
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("hindsight-redis ")
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert "memory for LLM agents" in help_text and "adapter" not in help_text


async def test_stats_list_the_live_workers_and_a_stopped_one_leaves(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    worker = Worker(settings, name="visible-worker")
    import asyncio

    task = asyncio.create_task(worker.run_async())

    async def listed() -> bool:
        return any(w["name"] == "visible-worker" for w in (await client.stats())["workers"])

    try:
        await wait_for(listed)
        entry = next(w for w in (await client.stats())["workers"] if w["name"] == "visible-worker")
        assert entry["pending"] == 0 and entry["idle_s"] < 5
    finally:
        worker.stop()
        await task
    stats = await client.stats()
    assert stats["workers"] == [] and stats["idle_consumers"] == 0  # it left the group


async def test_the_demo_explains_drops_and_leaves_no_litter(settings: Settings) -> None:
    from hindsight_redis.cli.demo import run_demo

    lines: list[str] = []
    assert await run_demo(settings, lines.append) == 0
    out = "\n".join(lines)
    assert "an acknowledgement, nothing to remember" in out
    assert "scored unlikely to be useful again" in out  # a drop by the write score
    assert "rule:" not in out and "score:low" not in out
    assert "removed the demo's namespace demo-" in out
    with redis_sync.Redis.from_url(settings.redis_url or "") as client:
        assert not list(client.scan_iter(match=f"{settings.key_prefix}:*"))
        names = [n.decode() for n in client.execute_command("FT._LIST")]
    prefix = settings.key_prefix
    assert not [n for n in names if n.startswith((f"{prefix}-demo-", f"{prefix}:{{demo-"))]
