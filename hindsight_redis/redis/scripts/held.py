"""Lua of the review of held writes (``trust.held``): approve, reject."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, Key, redis_script


@redis_script
async def release_held(
    redis: Redis,
    *,
    held: Key,
    outcome: Key,
    stream: Key,
    stats: Key,
    memory_id: Arg[str],
    expected: Arg[bytes],
    payload: Arg[bytes],
) -> Any:
    """
    -- Approve a held write: unless its entry changed since it was read (`expected`), take
    -- it out of the held hash, forget its outcome (the redelivery guard would ack the
    -- write unprocessed) and put `payload` (the event, reviewed) back on the stream.
    -- -> the new stream id, or false when the entry changed or is gone.
    if redis.call('HGET', held, memory_id) ~= expected then return false end
    redis.call('HDEL', held, memory_id)
    redis.call('DEL', outcome)
    redis.call('HINCRBY', stats, 'approved', 1)
    return redis.call('XADD', stream, '*', 'e', payload)
    """
    ...


@redis_script
async def reject_held(
    redis: Redis,
    *,
    held: Key,
    outcome: Key,
    stats: Key,
    memory_id: Arg[str],
    expected: Arg[bytes],
    entry: Arg[bytes],
    outcome_json: Arg[str],
    outcome_ttl_s: Arg[int],
) -> int:
    """
    -- Reject a held write: unless its entry changed since it was read (`expected`), store
    -- `entry` (state rejected) in its place and its outcome. -> 1, or 0 when it changed.
    if redis.call('HGET', held, memory_id) ~= expected then return 0 end
    redis.call('HSET', held, memory_id, entry)
    redis.call('SET', outcome, outcome_json, 'EX', outcome_ttl_s)
    redis.call('HINCRBY', stats, 'rejected', 1)
    return 1
    """
    ...
