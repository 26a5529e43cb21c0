"""A user's mistakes, run through the real command line: one line (three for argparse's),
exit 2, never a traceback; a closed pipe; the profile a data dir remembers; --port."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.redis.server import free_port
from tests.integration.helpers import Drain

MISSING = "0123456789abcdef0123456789abcdef"


def _cli(
    settings: Settings, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``hindsight-redis ARGS`` in a process of its own, on the test's settings, with a
    home of its own (no user config file unless the test writes one)."""
    base = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", *args],
        env={**base, **settings.to_env(), "HOME": str(home), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something listens on for the whole test."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def write_token(settings: Settings) -> str:
    """A live token of scope write (not admin)."""
    from hindsight_redis.service.tokens import create_token

    async def create() -> str:
        async with AsyncMemoryClient(settings) as client:
            token, _ = await create_token(
                await client.connect(),
                settings.key_prefix,
                namespace=settings.namespace,
                agent_id="writer",
                scope="write",
            )
            return token

    return asyncio.run(create())


BAD_URLS = ("localhost:6379", "not a url", "http://localhost:6379")

# (the command line, extra environment, what stderr must say); "<...>" filled in by the test.
MISTAKES: list[tuple[list[str], dict[str, str], str]] = [
    *(
        (cmd, {"HINDSIGHT_REDIS_URL": url}, "is not a Redis URL: use redis://host:port")
        for url in BAD_URLS
        for cmd in (["write", "x"], ["search", "x"], ["stats"], ["doctor"])
    ),
    (["stats", "--redis-url", "localhost:6379"], {}, "is not a Redis URL"),
    (  # its one seed down (the master that failed): what helps
        ["stats", "--redis-url", "redis+cluster://127.0.0.1:1"],
        {"HINDSIGHT_CLUSTER_RETRY_S": "0.3"},
        "more seed addresses help: redis+cluster://host1:port1,host2:port2,...",
    ),
    (["export", "--out", "/nonexistent-dir/x.jsonl.gz"], {}, "directory /nonexistent-dir does"),
    (["stats"], {"HINDSIGHT_CONFIG": "/nonexistent.toml"}, "'/nonexistent.toml', which is not"),
    (["stats"], {"HINDSIGHT_CONFIG": "<bad_toml>"}, "bad.toml:2: not valid TOML"),
    (["stats"], {"HINDSIGHT_TASK_HALF_LIFE_DAYS": "{bad json"}, "HINDSIGHT_TASK_HALF_LIFE_DAYS"),
    (["console", "--admin-token", "garbage"], {}, "not a live token"),
    (["console", "--admin-token", "<write_token>"], {}, "a write token (agent 'writer')"),
    (["console", "--port", "<taken_port>"], {}, "is taken"),
    (["metrics", "--port", "<taken_port>"], {}, "is taken"),
    (["mcp", "--port", "9000"], {}, "--port is the HTTP port: it needs --transport http"),
    (["get", MISSING], {}, f"no memory '{MISSING}'"),
    (["import", "/nonexistent.jsonl.gz"], {}, "cannot read /nonexistent.jsonl.gz"),
    (["purge", "--exported", "/nonexistent.jsonl.gz"], {}, "cannot read /nonexistent.jsonl.gz"),
    (["search", "x", "--top-k", "0"], {}, "top_k must be an integer from 1 to 100"),
    (["search", "x", "--top-k", "many"], {}, "invalid int value: 'many'"),
    (["audit", "--since", "last tuesday"], {}, "neither unix seconds nor an ISO date"),
    (["write", "x", "--occurred-at", "soon"], {}, "neither unix seconds nor an ISO date"),
    (["stats", "--namespace", "a b"], {}, "namespace (HINDSIGHT_NAMESPACE): must be 1-64"),
    (["sweep", "--threshold", "7"], {}, "threshold must be a number from 0 to 1"),
    (["server", "start", "--port", "7000"], {}, "the embedded Redis's port is --redis-port"),
    (["serve"], {}, "unknown command 'serve'"),
    (["token", "create"], {}, "required: --agent-id"),
]


@pytest.mark.parametrize(("args", "env", "said"), MISTAKES, ids=lambda v: str(v)[:40])
def test_a_mistake_is_one_short_error_and_exit_2(
    args: list[str],
    env: dict[str, str],
    said: str,
    settings: Settings,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text('namespace = "x"\nfoo bar\n')
    fills = {"<bad_toml>": str(bad_toml)}
    for name in ("write_token", "taken_port"):
        if f"<{name}>" in [*args, *env.values()]:
            fills[f"<{name}>"] = str(request.getfixturevalue(name))

    def filled(text: str) -> str:
        return fills.get(text, text)

    done = _cli(
        settings,
        tmp_path,
        *[filled(a) for a in args],
        env={k: filled(v) for k, v in env.items()},
    )
    err = done.stderr
    assert done.returncode == 2, err
    assert "Traceback" not in err and len(err.splitlines()) <= 3, err
    assert said in err
    assert done.stdout == ""  # nothing was served or printed first (no "admin" banner)


async def test_a_missing_id_reads_the_same_to_every_command(
    settings: Settings, tmp_path: Path, client: AsyncMemoryClient
) -> None:
    await client.connect()  # the namespace's keys may stay absent: the id is missing anyway
    said = set()
    for command in ("get", "forget", "restore", "protect"):
        done = _cli(settings, tmp_path, command, MISSING)
        assert done.returncode == 2, (command, done.stderr)
        said.add(done.stderr)
    assert said == {f"error: no memory '{MISSING}' in namespace '{settings.namespace}'\n"}


async def test_protection_is_lifted_from_the_command_line_and_the_error_says_how(
    settings: Settings, tmp_path: Path, client: AsyncMemoryClient, drain: Drain
) -> None:
    receipt = await client.write("The billing service deploys every Tuesday at 14:00 UTC.")
    await drain()
    memory = receipt.id
    assert _cli(settings, tmp_path, "protect", memory).returncode == 0
    refused = _cli(settings, tmp_path, "forget", memory)
    assert refused.returncode == 2 and f"protect --off {memory}" in refused.stderr
    lifted = _cli(settings, tmp_path, "protect", "--off", memory)
    assert lifted.returncode == 0 and json.loads(lifted.stdout)["protected"] is False
    assert _cli(settings, tmp_path, "forget", memory).returncode == 0


def test_a_reader_that_leaves_ends_the_command_quietly(settings: Settings, tmp_path: Path) -> None:
    # `hindsight-redis stats | head -0`, without the race: the pipe is closed before any write.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hindsight_redis.cli", "stats"],
            env={**os.environ, **settings.to_env(), "HOME": str(tmp_path)},
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")  # as a tool killed by SIGPIPE


def test_the_data_dir_remembers_its_profile_across_a_stop(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "HINDSIGHT_SERVER_DIR": str(tmp_path / "data"),
        "HINDSIGHT_SERVER_PORT": "0",
        "HINDSIGHT_EMBEDDER": "hash",
    }
    for name in ("HINDSIGHT_REDIS_URL", "HINDSIGHT_PROFILE", "XDG_DATA_HOME"):
        env.pop(name, None)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hindsight_redis.cli", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    try:
        assert cli("server", "start", "--profile", "durable").returncode == 0
        assert cli("server", "stop").stdout == "stopped\n"
        written = cli("write", "The staging cluster moved to eu-west-2 in March.")
        assert written.returncode == 0 and written.stderr == "", written.stderr  # no warning
        doctor = cli("doctor").stdout
        assert "profile: durable" in doctor and "appendfsync=always" in doctor, doctor
        again = cli("server", "start", "--profile", "balanced")
        assert again.returncode == 2 and len(again.stderr.splitlines()) == 1
        assert "already running" in again.stderr and "with profile durable" in again.stderr
        assert "server stop && hindsight-redis server start --profile balanced" in again.stderr
        assert cli("server", "stop").returncode == 0
        switched = cli("server", "start", "--profile", "balanced")
        assert switched.returncode == 0 and "(profile balanced" in switched.stdout
        said = switched.stderr.strip()
        assert "last run with profile durable; started it with balanced as asked" in said
        assert len(said.splitlines()) == 1
        assert cli("server", "stop").returncode == 0
        assert "profile: balanced" in cli("doctor").stdout  # not running: what a start takes
    finally:
        cli("server", "stop")


def test_console_port_is_the_port_it_serves_on(settings: Settings, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hindsight_redis.cli", "console", "--port", str(port)],
        env={**os.environ, **settings.to_env(), "HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the console did not serve on --port"
                time.sleep(0.1)
        assert answer.status_code == 200 and "hindsight" in answer.text.lower()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"at http://127.0.0.1:{port}/" in err and "Traceback" not in err
