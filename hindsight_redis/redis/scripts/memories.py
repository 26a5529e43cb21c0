"""Lua that changes memories and the index record: refine, access counts, updates."""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, ArgList, Key, KeyList, redis_script


@redis_script
async def refine(
    redis: Redis,
    *,
    memory: Key,
    index_meta: Key,
    content: Arg[str],
    field: Arg[str],
    vector: Arg[bytes],
    model: Arg[str],
    state: Arg[str],
) -> int:
    """
    -- Store a memory's contextual vector (pipeline.refine), its refine tag then state
    -- ('draft' or 'done'). Skipped (0) when the memory is gone, its content is not the
    -- text that was embedded, it is done already, or it is in that state already (two
    -- refiners found it pending; the second claimed it once the first had released
    -- it); refused (-1) when the index now records another contextual model (a reindex
    -- switched it), so a stale refiner never writes vectors of the wrong model.
    -- -> 1 stored
    if redis.call('HGET', index_meta, 'context_model') ~= model then return -1 end
    if redis.call('HGET', memory, 'content') ~= content then return 0 end
    local current = redis.call('HGET', memory, 'refine')
    if current == 'done' or current == state then return 0 end
    redis.call('HSET', memory, field, vector, 'refine', state)
    return 1
    """
    ...


@redis_script
async def count_hits(redis: Redis, *, access_log: Key, counts: ArgList) -> int:
    """
    -- Add search hits to the access log, which flush_access folds into the memories:
    -- counts holds pairs (memory id, hits). -> memories counted
    for i = counts_first, #ARGV, 2 do redis.call('HINCRBY', access_log, ARGV[i], ARGV[i + 1]) end
    return (#ARGV - counts_first + 1) / 2
    """
    ...


@redis_script
async def flush_access(
    redis: Redis,
    *,
    access_log: Key,
    merge_log: Key,
    memories: KeyList,
    now: Arg[str],
    ids: ArgList,
) -> int:
    """
    -- Fold the pending hit counts of some memories (ids, with their hashes in
    -- memories) into access_count / last_accessed_at, and the sources of the writes
    -- merged into them (merge_log) into sources; memories deleted since are
    -- skipped. -> how many log entries were folded in
    local function add_sources(list, more)
      for part in string.gmatch(more, '[^|]+') do
        local found = false
        for have in string.gmatch(list, '[^|]+') do
          if have == part then found = true; break end
        end
        if not found then list = (list == '' and part) or (list .. '|' .. part) end
      end
      return list
    end
    local done = 0
    for i = memories_first, #KEYS do
      local id = ARGV[ids_first + i - memories_first]
      local hits = redis.call('HGET', access_log, id)
      if hits then
        if redis.call('EXISTS', KEYS[i]) == 1 then
          -- one HSET, so the memory is re-indexed once
          local old = redis.call('HMGET', KEYS[i], 'access_count', 'sources')
          local merged = redis.call('HGET', merge_log, id)
          local fields = {'access_count', tonumber(old[1] or '0') + tonumber(hits),
                          'last_accessed_at', now}
          if merged then
            table.insert(fields, 'sources')
            table.insert(fields, add_sources(old[2] or '', merged))
          end
          redis.call('HSET', KEYS[i], unpack(fields))
        end
        redis.call('HDEL', access_log, id)
        redis.call('HDEL', merge_log, id)
        done = done + 1
      end
    end
    return done
    """
    ...


# -- memories and the index -----------------------------------------------------------


@redis_script
async def update_existing(redis: Redis, *, memory: Key, fields: ArgList) -> int:
    """
    -- HSET field/value pairs on a memory that exists. -> 1 updated, 0 no such memory
    -- (a plain HSET on a missing key would create one)
    if redis.call('EXISTS', memory) == 0 then return 0 end
    redis.call('HSET', memory, unpack(ARGV, fields_first))
    return 1
    """
    ...


@redis_script
async def record_if_absent(redis: Redis, *, index_meta: Key, fields: ArgList) -> int:
    """
    -- Record the index (all fields at once) unless one is recorded: first writer wins.
    if redis.call('EXISTS', index_meta) == 1 then return 0 end
    redis.call('HSET', index_meta, unpack(ARGV, fields_first))
    return 1
    """
    ...
