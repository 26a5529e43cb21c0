"""One error boundary: what users see when Redis is wrong, as one line with a hint.

Real processes and servers: the CLI is run as a user runs it, against a plain
HTTP server, a Redis without the search module and the session's server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import redis as redis_sync

from hindsight_redis import (
    AsyncMemoryClient,
    InvalidArgument,
    NotARedisServer,
    RedisUnavailable,
    SearchModuleMissing,
    Settings,
)
from hindsight_redis.errors import RedisCommandError
from hindsight_redis.redis.server import free_port
from tests.integration.helpers import bare_redis, http_server


def _cli(url: str, *args: str, **env: str) -> tuple[int, str, float]:
    """Run ``hindsight-redis ARGS`` against ``url``: (exit code, all output, seconds)."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", *args],
        env={**os.environ, "HINDSIGHT_REDIS_URL": url, "HINDSIGHT_EMBEDDER": "hash", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def _one_clear_line(code: int, output: str) -> str:
    assert code != 0, output
    assert "Traceback" not in output, output
    lines = output.strip().splitlines()
    assert 1 <= len(lines) <= 3, output
    assert lines[0].startswith("error: "), output
    return output


@pytest.fixture(scope="module")
def no_search_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis without the search module."""
    with bare_redis(tmp_path_factory.mktemp("bare")) as url:
        yield url


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """A redis:// URL where an HTTP server answers."""
    with http_server() as url:
        yield url


def test_an_http_server_at_the_redis_url_is_one_line(http_url: str) -> None:
    for command in (["stats"], ["search", "hello"], ["write", "a fact about billing v2"]):
        out = _one_clear_line(*_cli(http_url, *command)[:2])
        assert "does not speak the Redis protocol" in out and "HINDSIGHT_REDIS_URL" in out


def test_search_without_the_search_module_is_one_line(no_search_url: str) -> None:
    out = _one_clear_line(*_cli(no_search_url, "search", "hello")[:2])
    assert "no search module" in out and "Redis 8" in out


def test_replaying_a_bogus_dead_letter_id_is_one_line(no_search_url: str) -> None:
    out = _one_clear_line(*_cli(no_search_url, "dlq", "replay", "bogus-id")[:2])
    assert "'bogus-id' is not a dead-letter id" in out and "dlq list" in out


def test_write_wait_without_the_search_module_fails_at_once(no_search_url: str) -> None:
    code, out, seconds = _cli(
        no_search_url,
        "write",
        "The billing service moved to eu-west-1",
        "--wait",
        HINDSIGHT_WRITE_WAIT_TIMEOUT_S="30",
    )
    _one_clear_line(code, out)
    assert "no search module" in out and "workers" not in out
    assert seconds < 15  # not the 30 s wait: process start-up only
    assert redis_sync.Redis.from_url(no_search_url).dbsize() == 0  # nothing was queued


def test_nothing_listening_is_one_line() -> None:
    out = _one_clear_line(*_cli(f"redis://127.0.0.1:{free_port()}/0", "stats")[:2])
    assert "Redis is unreachable" in out


def test_invalid_settings_are_one_line() -> None:
    code, out, _ = _cli("redis://127.0.0.1:1/0", "stats", HINDSIGHT_MAX_BACKLOG="lots")
    _one_clear_line(code, out)
    assert "max_backlog" in out and "HINDSIGHT_MAX_BACKLOG" in out


def test_bad_cli_arguments_are_one_line(settings: Settings) -> None:
    url = settings.redis_url or ""
    env = {"HINDSIGHT_KEY_PREFIX": settings.key_prefix}
    out = _one_clear_line(*_cli(url, "write", "x y z", "--timeout-s", "-1", "--wait", **env)[:2])
    assert "timeout_s" in out
    out = _one_clear_line(*_cli(url, "search", "x", "--since", "10", "--until", "5", **env)[:2])
    assert "since" in out


async def test_the_library_raises_the_mapped_errors(no_search_url: str, http_url: str) -> None:
    plain = Settings(redis_url=no_search_url, embedder="hash", key_prefix="bare")
    async with AsyncMemoryClient(plain) as client:
        with pytest.raises(SearchModuleMissing) as caught:
            await client.search("hello")
        assert caught.value.__cause__ is not None  # mapped `from` the Redis error
        with pytest.raises(SearchModuleMissing):
            await client.write("Billing moved to eu-west-1 on March 3", wait=True)
        assert (await client.stats())["refine_pending"] is None  # stats still work
        with pytest.raises(InvalidArgument, match="dead-letter id"):
            await client.replay_dead_letters(["1-0", "nope"])
    with pytest.raises(NotARedisServer):
        await AsyncMemoryClient(Settings(redis_url=http_url)).connect()
    with pytest.raises(RedisUnavailable) as unreachable:
        await AsyncMemoryClient(Settings(redis_url=f"redis://127.0.0.1:{free_port()}")).connect()
    assert unreachable.value.retryable


async def test_a_refused_command_is_a_command_error(client: AsyncMemoryClient) -> None:
    # An id Redis itself refuses (valid shape, but out of range) gets the server's reply.
    with pytest.raises(RedisCommandError, match="Invalid stream ID") as caught:
        await client.replay_dead_letters(["99999999999999999999-0"])
    assert "Invalid stream ID" in caught.value.reply
