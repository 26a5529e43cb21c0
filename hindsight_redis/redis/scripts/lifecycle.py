"""Lua of forgetting: archive (by hand and by sweeps), the sweeper's lease, purge, import.

Every check that decides whether a memory may be archived or deleted runs in
the same script as the change, so a memory written, read, protected or
restored meanwhile is never archived or deleted on stale data.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, ArgList, Key, KeyList, redis_script


@redis_script
async def archive_one(
    redis: Redis, *, memory: Key, force: Arg[bool], now: Arg[str], reason: Arg[str]
) -> int:
    """
    -- forget(): archive one memory. -> 1 archived (or already archived), 0 no such
    -- memory, -1 protected (archived only with force)
    if redis.call('EXISTS', memory) == 0 then return 0 end
    local state = redis.call('HMGET', memory, 'status', 'protected')
    if state[1] == 'archived' then return 1 end
    if state[2] == '1' and not force then return -1 end
    redis.call('HSET', memory, 'status', 'archived', 'archived_at', now, 'archive_reason', reason)
    return 1
    """
    ...


@redis_script
async def archive_if_unchanged(
    redis: Redis, *, access_log: Key, memories: KeyList, now: Arg[str], plan: ArgList
) -> int:
    """
    -- A sweep step: archive each memory only if it is still what was scored. plan: per
    -- memory, its id, the access_count and last_accessed_at it was scored with, and the
    -- reason to record. Kept: not active any more, protected, read since (a higher
    -- count, a later access, or hits waiting in the access log) or gone.
    -- -> how many were archived
    local archived = 0
    for i = memories_first, #KEYS do
      local p = plan_first + 4 * (i - memories_first)
      local state = redis.call('HMGET', KEYS[i], 'status', 'protected', 'access_count',
                               'last_accessed_at')
      if state[1] == 'active' and state[2] ~= '1'
          and tonumber(state[3] or '0') <= tonumber(ARGV[p + 1])
          and tonumber(state[4] or '0') <= tonumber(ARGV[p + 2]) + 0.001
          and redis.call('HEXISTS', access_log, ARGV[p]) == 0 then
        redis.call('HSET', KEYS[i], 'status', 'archived', 'archived_at', now,
                   'archive_reason', ARGV[p + 3])
        archived = archived + 1
      end
    end
    return archived
    """
    ...


@redis_script
async def lease_acquire(
    redis: Redis, *, lease: Key, holder: Arg[str], ttl_ms: Arg[int], stale: Arg[str]
) -> Any:
    """
    -- Take the lease (SET NX PX), or take it over from ``stale`` (a holder known to be
    -- dead) if it still holds it. -> {1} taken, or {0, holder, ms left}
    if redis.call('SET', lease, holder, 'NX', 'PX', ttl_ms) then return {1} end
    local current = redis.call('GET', lease)
    if stale ~= '' and current == stale then
      redis.call('SET', lease, holder, 'PX', ttl_ms)
      return {1}
    end
    return {0, current or '', redis.call('PTTL', lease)}
    """
    ...


@redis_script
async def lease_renew(redis: Redis, *, lease: Key, holder: Arg[str], ttl_ms: Arg[int]) -> int:
    """
    -- Extend the lease if this holder still has it. -> 1 renewed, 0 lost
    if redis.call('GET', lease) ~= holder then return 0 end
    redis.call('PEXPIRE', lease, ttl_ms)
    return 1
    """
    ...


@redis_script
async def lease_release(redis: Redis, *, lease: Key, holder: Arg[str]) -> int:
    """
    -- Give the lease back if this holder still has it. -> 1 released, 0 not held
    if redis.call('GET', lease) ~= holder then return 0 end
    redis.call('DEL', lease)
    return 1
    """
    ...


@redis_script
async def purge_if_unchanged(
    redis: Redis, *, access_log: Key, memories: KeyList, plan: ArgList
) -> Any:
    """
    -- Delete archived memories that are exactly as exported. plan: per memory, its id,
    -- the export's content hash, the number n of its fields, then the n field names.
    -- The hash is SHA-1 over name NUL length NUL value for each field in that order
    -- (coldfile.content_hash); a memory with another field count is changed.
    -- -> per memory: 1 deleted, 0 changed since the export, -1 absent, -2 not archived
    local codes = {}
    local p = plan_first
    for i = memories_first, #KEYS do
      local id, expected, n = ARGV[p], ARGV[p + 1], tonumber(ARGV[p + 2])
      local names = {unpack(ARGV, p + 3, p + 2 + n)}
      p = p + 3 + n
      if redis.call('EXISTS', KEYS[i]) == 0 then
        codes[#codes + 1] = -1
      elseif redis.call('HGET', KEYS[i], 'status') ~= 'archived' then
        codes[#codes + 1] = -2
      elseif redis.call('HLEN', KEYS[i]) ~= n then
        codes[#codes + 1] = 0
      else
        local values = redis.call('HMGET', KEYS[i], unpack(names))
        local parts = {}
        for j = 1, n do
          local value = values[j]
          if not value then value = '' end
          parts[#parts + 1] = names[j] .. '\\0' .. #value .. '\\0' .. value
        end
        if redis.sha1hex(table.concat(parts)) == expected then
          redis.call('DEL', KEYS[i])
          redis.call('HDEL', access_log, id)
          codes[#codes + 1] = 1
        else
          codes[#codes + 1] = 0
        end
      end
    end
    return codes
    """
    ...


@redis_script
async def release_claims(redis: Redis, *, claims: KeyList, ids: ArgList) -> int:
    """
    -- Delete each content claim that still names its memory (ids: one per claim); a claim
    -- a worker gave to a new twin meanwhile is kept. -> how many were deleted
    local released = 0
    for i = claims_first, #KEYS do
      if redis.call('GET', KEYS[i]) == ARGV[ids_first + i - claims_first] then
        redis.call('DEL', KEYS[i])
        released = released + 1
      end
    end
    return released
    """
    ...


@redis_script
async def import_if_absent(redis: Redis, *, memories: KeyList, docs: ArgList) -> int:
    """
    -- Import: write each memory (its field/value pairs as one msgpack array) unless a
    -- memory with its id exists. -> how many were written
    local written = 0
    for i = memories_first, #KEYS do
      if redis.call('EXISTS', KEYS[i]) == 0 then
        redis.call('HSET', KEYS[i], unpack(cmsgpack.unpack(ARGV[docs_first + i - memories_first])))
        written = written + 1
      end
    end
    return written
    """
    ...
