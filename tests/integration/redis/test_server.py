"""The embedded server launcher and doctor, against real redis-server processes."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import redis

from hindsight_redis.cli import main
from hindsight_redis.errors import DataDirError, PortInUse, ServerError
from hindsight_redis.redis.server import EmbeddedServer, find_binaries, get_profile
from tests.integration.helpers import bare_redis


def test_start_applies_the_profile_and_loads_search(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "d", get_profile("durable"), port=0)
    state = server.start()
    try:
        client = redis.Redis.from_url(state.url)
        assert client.config_get("appendfsync") == {"appendfsync": "always"}
        modules = {m[b"name"] for m in client.module_list()}
        assert {b"search", b"ReJSON"} <= modules
        assert server.state() == state and server.pid_file.exists() and server.log_file.exists()
        with pytest.raises(ServerError, match="already running"):
            server.start()
        assert server.ensure_started() == state
    finally:
        assert server.stop()
    assert server.state() is None and not server.stop()


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(PortInUse, match=f"port {port}"):
            EmbeddedServer(tmp_path, get_profile("ephemeral"), port=port).start()


def test_unwritable_data_dir_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    with pytest.raises(DataDirError, match="not writable"):
        EmbeddedServer(blocker / "sub", get_profile("ephemeral"), port=0).start()


def test_cli_server_and_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HINDSIGHT_REDIS_URL", raising=False)
    common = ["--server-dir", str(tmp_path), "--redis-port", "0", "--profile", "durable"]
    assert main(["server", "start", *common]) == 0
    try:
        assert main(["server", "status", *common]) == 0
        assert main(["doctor", *common]) == 0
        out = capsys.readouterr().out
        assert "search" in out and "appendfsync=always" in out and "all checks passed" in out
        # No profile given: the one the server was started with (server.json).
        assert main(["doctor", "--server-dir", str(tmp_path)]) == 0
        out = capsys.readouterr().out
        assert "durable" in out and "all checks passed" in out
        # An explicit profile that is not the server's: one plain problem.
        assert main(["doctor", "--server-dir", str(tmp_path), "--profile", "balanced"]) == 1
        out = capsys.readouterr().out
        assert "runs with profile 'durable', but profile 'balanced' is configured" in out
        assert out.count("  - ") == 1
    finally:
        assert main(["server", "stop", *common]) == 0
    assert main(["server", "status", *common]) == 3


def _doctor_on_bare_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str]:
    """``hindsight-redis doctor`` against a hand-started server: (exit code, output)."""
    with bare_redis(tmp_path, *extra) as url:
        code = main(["doctor", "--redis-url", url, "--profile", "ephemeral"])
        return code, capsys.readouterr().out


def test_doctor_explains_a_redis_without_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _doctor_on_bare_server(tmp_path, capsys)
    assert code == 1 and "no search module" in out


def test_doctor_advises_the_hash_listpack_setting_a_plain_server_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = _doctor_on_bare_server(tmp_path, capsys)  # Redis's default: 64 bytes
    assert "memory hashes are hashtables" in out and "set hash-max-listpack-value 1024" in out


def test_doctor_flags_a_search_gc_that_runs_too_rarely(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    search = next(m for m in find_binaries().modules if m.name.startswith("redisearch"))
    # loaded by hand, without the launcher's arguments: the default GC, every 30 s
    code, out = _doctor_on_bare_server(tmp_path, capsys, "--loadmodule", str(search))
    assert code == 1 and "search GC runs every 30s" in out
