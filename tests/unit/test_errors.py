"""The error boundary: each Redis/redisvl error becomes one of ours, ``from`` the original."""

from __future__ import annotations

import pytest
from redis import exceptions as rx
from redisvl.exceptions import RedisSearchError

from hindsight_redis.errors import (
    HindsightError,
    InvalidArgument,
    InvalidQuery,
    NotARedisServer,
    RedisAccessDenied,
    RedisCommandError,
    RedisOutOfMemory,
    RedisUnavailable,
    SearchModuleMissing,
    map_redis_error,
    redis_errors,
)


@pytest.mark.parametrize(
    ("error", "mapped", "text"),
    [
        (rx.ConnectionError("Error 111 connecting"), RedisUnavailable, "unreachable"),
        (rx.TimeoutError("Timeout reading"), RedisUnavailable, "unreachable"),
        (rx.BusyLoadingError("loading"), RedisUnavailable, "loading its data"),
        (rx.ReadOnlyError("READONLY replica"), RedisUnavailable, "read-only replica"),
        (rx.AuthenticationError("invalid password"), RedisAccessDenied, "credentials"),
        (rx.NoPermissionError("NOPERM no rights"), RedisAccessDenied, "ACL"),
        (rx.InvalidResponse('Protocol error, got "<"'), NotARedisServer, "Redis protocol"),
        (rx.DataError("Invalid input of type"), InvalidArgument, "Invalid input"),
        (rx.ResponseError("unknown command 'FT.INFO', with args"), SearchModuleMissing, "Redis 8"),
        (rx.ResponseError("Syntax error at offset 3 near x"), InvalidQuery, "rejected the query"),
        (rx.OutOfMemoryError("OOM command not allowed"), RedisOutOfMemory, "maxmemory"),
        (  # as redis-py raises it: the "OOM" cut off
            rx.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
            RedisOutOfMemory,
            "nothing was written",
        ),
        (
            rx.ResponseError(
                "Command # 1 (XADD s * e x) of pipeline caused error: command not allowed "
                "when used memory > 'maxmemory'."
            ),
            RedisOutOfMemory,
            "refuses writes",
        ),
        (
            rx.ResponseError("MISCONF Errors writing to the AOF file: No space left on device"),
            RedisUnavailable,
            "cannot write to its disk",
        ),
        (
            rx.ResponseError(
                "Command # 6 (HINCRBY a b 1) of pipeline caused error: ('MISCONF "
                "Errors writing to the AOF file: File too large',)"
            ),
            RedisUnavailable,
            "cannot write to its disk",
        ),
        (
            rx.ResponseError("Command # 1 (XADD s * e MISCONF) of pipeline caused error: no"),
            RedisCommandError,
            "Redis refused it",
        ),
        (rx.ResponseError("Invalid stream ID"), RedisCommandError, "Invalid stream ID"),
        (
            RedisSearchError("fetching index info: unknown command 'FT.INFO'"),
            SearchModuleMissing,
            "no search module",
        ),
    ],
)
def test_redis_errors_map_to_ours(error: Exception, mapped: type, text: str) -> None:
    result = map_redis_error(error, "search")
    assert type(result) is mapped and text in str(result) and "cannot search" in str(result)


def test_a_redisvl_error_maps_by_its_cause() -> None:
    try:
        try:
            raise rx.ConnectionError("Error 111")
        except rx.ConnectionError as inner:
            raise RedisSearchError("could not list indexes") from inner
    except RedisSearchError as e:
        assert isinstance(map_redis_error(e, "search"), RedisUnavailable)


def test_the_boundary_raises_from_the_original_and_passes_ours_through() -> None:
    with (
        pytest.raises(RedisUnavailable, match=r"cannot write: .*; retry it") as caught,
        redis_errors("write", hint="retry it"),
    ):
        raise rx.ConnectionError("gone")
    assert isinstance(caught.value.__cause__, rx.ConnectionError)
    assert caught.value.retryable
    ours = InvalidQuery("bad top_k")
    with pytest.raises(InvalidQuery) as same, redis_errors("search"):
        raise ours
    assert same.value is ours
    with pytest.raises(KeyError), redis_errors("search"):  # not Redis's: untouched
        raise KeyError("x")


def test_out_of_memory_is_retryable_like_an_outage() -> None:
    mapped = map_redis_error(rx.OutOfMemoryError("command not allowed"), "write")
    assert isinstance(mapped, RedisUnavailable) and mapped.retryable


def test_command_errors_carry_the_reply() -> None:
    mapped = map_redis_error(rx.ResponseError("BUSYGROUP Consumer Group name already exists"), "x")
    assert isinstance(mapped, RedisCommandError) and mapped.reply.startswith("BUSYGROUP")
    assert isinstance(mapped, HindsightError) and not mapped.retryable
