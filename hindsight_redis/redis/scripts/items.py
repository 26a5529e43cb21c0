"""Lua of keyed items (``client/items.py``): put, delete, and re-point an item at its memory.

An item's hash, its path's key set and the path counter change together, so
a path is listed exactly while it holds an item.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, Key, redis_script


@redis_script
async def put_item(
    redis: Redis,
    *,
    item: Key,
    members: Key,
    paths: Key,
    path: Arg[str],
    key: Arg[str],
    value: Arg[bytes],
    now: Arg[str],
    memory_id: Arg[str],
    content_sha: Arg[str],
) -> Any:
    """
    -- Store an item (a new one, or a new version of it). -> {created_at, the memory id
    -- the item pointed at before ('' for a new item)}
    local before = redis.call('HMGET', item, 'created_at', 'memory_id')
    local created = before[1]
    if not created then
      created = now
      redis.call('HINCRBY', paths, path, 1)
      redis.call('ZADD', members, now, key)
    end
    redis.call('HSET', item, 'path', path, 'key', key, 'value', value, 'created_at', created,
               'updated_at', now, 'memory_id', memory_id, 'content_sha', content_sha)
    return {created, before[2] or ''}
    """
    ...


@redis_script
async def delete_item(
    redis: Redis, *, item: Key, members: Key, paths: Key, path: Arg[str], key: Arg[str]
) -> Any:
    """
    -- Delete an item. -> the memory id it pointed at, or false when there was no item
    local memory_id = redis.call('HGET', item, 'memory_id')
    if not memory_id then return false end
    redis.call('DEL', item)
    redis.call('ZREM', members, key)
    if redis.call('HINCRBY', paths, path, -1) <= 0 then redis.call('HDEL', paths, path) end
    return memory_id
    """
    ...


@redis_script
async def retarget_item(redis: Redis, *, item: Key, expected: Arg[str], memory_id: Arg[str]) -> int:
    """
    -- Point an item at the memory its own was merged into, unless it changed since.
    -- -> 1 done, 0 the item moved on (or is gone)
    if redis.call('HGET', item, 'memory_id') ~= expected then return 0 end
    redis.call('HSET', item, 'memory_id', memory_id)
    return 1
    """
    ...
