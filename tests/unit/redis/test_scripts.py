"""The Lua script wrapper: names bound to KEYS/ARGV, typed locals, one SHA."""

from __future__ import annotations

import hashlib

import pytest
from redis.asyncio import Redis

from hindsight_redis.redis import scripts
from hindsight_redis.redis.lua import Arg, ArgList, Key, KeyList, redis_script


def test_parameters_become_lua_locals() -> None:
    lua = scripts.write_events.lua
    assert lua.startswith("local stream = KEYS[1]\nlocal stats = KEYS[2]\n")
    assert "local idempotency_first = 3\n" in lua  # the variadic keys start after 2 keys
    assert "local max_backlog = tonumber(ARGV[1])\n" in lua
    assert "local events_first = 3\n" in lua
    assert "local notify = ARGV[7] == '1'\n" in scripts.dead_letter.lua
    assert scripts.write_events.sha == hashlib.sha1(lua.encode()).hexdigest()


def test_every_script_parses_its_arguments_once() -> None:
    for script in (
        scripts.write_events,
        scripts.commit,
        scripts.dead_letter,
        scripts.replay,
        scripts.refine,
        scripts.flush_access,
        scripts.update_existing,
        scripts.record_if_absent,
    ):
        assert "ARGV[" in script.lua or "KEYS[" in script.lua
        assert len(script.sha) == 40


def test_calls_are_encoded_in_signature_order() -> None:
    command = scripts.update_existing._command({"memory": "k", "fields": ["a", 1, True]})
    assert command == ["EVALSHA", scripts.update_existing.sha, 1, "k", "a", "1", "1"]


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(TypeError, match="Lua body"):

        @redis_script
        async def no_body(redis: Redis, *, key: Key) -> int: ...

    with pytest.raises(TypeError, match="must be a Key"):

        @redis_script
        async def untyped(redis: Redis, *, key: str) -> int:
            """return 1"""
            ...

    with pytest.raises(TypeError, match="KeyList must be the last key"):

        @redis_script
        async def keys_after_list(redis: Redis, *, many: KeyList, one: Key) -> int:
            """return 1"""
            ...

    with pytest.raises(TypeError, match="ArgList must be the last"):

        @redis_script
        async def args_after_list(redis: Redis, *, many: ArgList, one: Arg[str]) -> int:
            """return 1"""
            ...
