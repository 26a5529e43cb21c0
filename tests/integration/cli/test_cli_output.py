"""What the CLI prints for people, through real processes: whole rows into a pipe, rows that
fit a terminal's ``COLUMNS``, why a search found nothing, and the line a long-running
command says as it starts."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys

from hindsight_redis import MemoryClient, Settings, Worker
from hindsight_redis.ops.layout import cells
from hindsight_redis.redis.server import free_port

LONG = (
    "The deploy window for billing-service is Tuesday 14:00 to 16:00 UTC, agreed with the "
    "payments team after the March incident; the change freeze covers every service of the "
    "checkout cluster and the reporting jobs that read from it overnight"
)
CLI = [sys.executable, "-m", "hindsight_redis.cli"]


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {**os.environ, **settings.to_env(), **extra}
    env.pop("NO_COLOR", None)
    return env


def _run(settings: Settings, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=_env(settings, **extra), capture_output=True, text=True, timeout=120
    )


def _on_terminal(settings: Settings, *args: str, columns: int) -> str:
    """The command's stdout as a terminal of ``columns`` shows it (a pseudo-terminal)."""
    primary, secondary = pty.openpty()
    env = _env(settings, COLUMNS=str(columns), TERM="xterm")
    proc = subprocess.Popen(
        [*CLI, *args], env=env, stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.PIPE
    )
    os.close(secondary)
    out = b""
    try:
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal's other end closed: the command is done
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(primary)
        _, err = proc.communicate(timeout=120)  # reaps it and closes its stderr pipe
    assert proc.returncode == 0, err
    return out.decode().replace("\r\n", "\n")


def _indexed(settings: Settings, *texts: str) -> list[str]:
    with MemoryClient(settings) as client:
        ids = []
        for text in texts:
            ids.append(client.write(text, agent_id="planner").id)
            Worker(settings).run(burst=True)
    return ids


def test_search_into_a_pipe_prints_whole_rows_and_a_terminal_gets_rows_that_fit(
    settings: Settings,
) -> None:
    _indexed(settings, LONG)
    piped = _run(settings, "search", "billing deploy window", COLUMNS="60")
    assert piped.returncode == 0 and piped.stderr == ""
    rows = piped.stdout.splitlines()
    assert rows[1].endswith(LONG) and "…" not in piped.stdout  # COLUMNS is a terminal's
    shown = _on_terminal(settings, "search", "billing deploy window", columns=60)
    lines = shown.splitlines()
    assert lines[0].split()[0] == "#" and lines[1].split()[:2] == ["1", "1.00"]
    assert all(cells(line) <= 60 for line in lines) and "…" in shown
    assert "The deploy window" in shown


def test_conflicts_mark_what_changed_in_a_pipe_and_on_a_terminal(settings: Settings) -> None:
    old_text = "The deploy window for billing is Tuesday 14:00"
    new_text = "The deploy window for billing is Thursday 14:00"
    old, new = _indexed(settings, old_text, new_text)
    piped = _run(settings, "conflicts").stdout.splitlines()
    assert piped[1].startswith(f"new  {new}") and piped[1].endswith(
        "The deploy window for billing is {+Thursday+} 14:00"
    )
    assert piped[2].startswith(f"old  {old}") and "[-Tuesday-]" in piped[2]
    shown = _on_terminal(settings, "conflicts", columns=60)
    assert "\x1b[1;32mThursday\x1b[0m" in shown and "\x1b[1;31mTuesday\x1b[0m" in shown
    assert all(cells(line) <= 60 for line in shown.splitlines())


def test_a_search_that_finds_nothing_says_why_on_stderr(settings: Settings) -> None:
    never = _run(settings, "search", "anything")
    assert never.returncode == 0 and never.stdout.strip() == "no memory matches"
    assert never.stderr.strip() == "namespace 'test' has never been written to"
    with MemoryClient(settings) as client:
        client.write("Alice moved to Berlin in May", agent_id="planner")
    waiting = _run(settings, "search", "Berlin")
    assert waiting.returncode == 0
    assert waiting.stderr.strip() == (
        "1 write(s) waiting and no live worker: start `hindsight-redis worker`"
    )
    elsewhere = _run(settings, "search", "Berlin", "--namespace", "team-z", "--json")
    assert elsewhere.returncode == 0 and elsewhere.stdout.strip() == "[]"
    assert elsewhere.stderr.strip() == (
        "namespace 'team-z' has never been written to (namespaces: test)"
    )
    Worker(settings).run(burst=True)
    found = _run(settings, "search", "Berlin")
    assert found.stderr == "" and "Alice moved to Berlin" in found.stdout
    acks = settings.model_copy(update={"namespace": "acks"})
    with MemoryClient(acks) as client:
        client.write("ok thanks")
    Worker(acks).run(burst=True)
    dropped = _run(settings, "search", "thanks", "--namespace", "acks")
    assert dropped.stderr.strip() == (
        "nothing indexed yet: of 1 write(s), 1 dropped by the filters, 0 held for review "
        "(`hindsight-redis stats`)"
    )


def _first_line(settings: Settings, *args: str, **extra: str) -> str:
    """The first line the command writes to stderr; the command is then stopped."""
    proc = subprocess.Popen(
        [*CLI, *args],
        env=_env(settings, **extra),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready, f"{args[0]} said nothing within 60 s"
        return proc.stderr.readline().rstrip("\n")
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def test_worker_metrics_and_mcp_say_one_line_as_they_start(settings: Settings) -> None:
    url = str(settings.redis_url)
    line = _first_line(settings, "worker")
    assert line.startswith("worker ") and ": namespace 'test'; Redis " + url in line
    assert "(profile ephemeral)" in line and line.endswith("SIGTERM or Ctrl-C stops it")
    line = _first_line(settings, "worker", "--all-namespaces")
    assert f"every namespace of prefix {settings.key_prefix!r}, new ones too" in line
    port = free_port()
    secret = url.replace("redis://", "redis://someone:hunter2@")
    line = _first_line(settings, "metrics", "--port", str(port), HINDSIGHT_REDIS_URL=secret)
    assert line.startswith(f"Prometheus metrics at http://127.0.0.1:{port}/metrics: ")
    assert "hunter2" not in line and "redis://***@" in line
    mcp_port = free_port()
    line = _first_line(
        settings, "mcp", "--transport", "http", "--port", str(mcp_port), "--workers", "0"
    )
    assert line.startswith(f"MCP at http://127.0.0.1:{mcp_port}/mcp: namespace 'test' ")
    assert "no in-process worker (run `hindsight-redis worker`)" in line
    line = _first_line(settings, "mcp")
    assert line.startswith("MCP over stdio: namespace 'test'; Redis " + url)
    assert "1 in-process worker(s) for every namespace" in line


def test_sweep_dry_run_piped_prints_whole_memories(settings: Settings) -> None:
    _indexed(settings, LONG)
    done = _run(settings, "sweep", "--dry-run", "--max-active", "0")
    assert done.returncode == 0, done.stderr
    assert LONG in done.stdout  # not the first 80 characters
