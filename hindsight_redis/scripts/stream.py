"""Lua of the write path and the workers: append, commit, dead-letter, leave, replay."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.lua import Arg, ArgList, Key, KeyList, redis_script

# -- the write path -----------------------------------------------------------------


@redis_script
async def write_events(
    redis: Redis,
    *,
    stream: Key,
    stats: Key,
    idempotency: KeyList,
    max_backlog: Arg[int],
    idempotency_ttl_s: Arg[int],
    events: ArgList,
) -> Any:
    """
    -- Accepted writes are counted by the stream itself (XINFO STREAM entries-added);
    -- the backlog is that minus the workers' "processed" counter.
    -- idempotency: one key per write; events: per write, its payload and "1" when
    -- it has an idempotency key (else "0").
    -- -> "b:<backlog>" when the backlog is at its limit (nothing written), else one
    --    reply per write: "a:<stream id>" accepted | "d:<first stream id>" duplicate
    local added = 0
    local ok, info = pcall(redis.call, 'XINFO', 'STREAM', stream)
    if ok then
      for i = 1, #info, 2 do
        if info[i] == 'entries-added' then added = tonumber(info[i + 1]) end
      end
    end
    local processed = tonumber(redis.call('HGET', stats, 'processed') or '0')
    local backlog = added - processed
    if backlog >= max_backlog then return 'b:' .. backlog end
    local replies = {}
    for i = idempotency_first, #KEYS do
      local slot = events_first + 2 * (i - idempotency_first)
      local keyed = ARGV[slot + 1] == '1'
      local first = keyed and redis.call('GET', KEYS[i])
      if first then
        replies[#replies + 1] = 'd:' .. first
      else
        local id = redis.call('XADD', stream, '*', 'e', ARGV[slot])
        if keyed then redis.call('SET', KEYS[i], id, 'EX', idempotency_ttl_s) end
        replies[#replies + 1] = 'a:' .. id
      end
    end
    return replies
    """
    ...


# -- workers --------------------------------------------------------------------------


@redis_script
async def commit(
    redis: Redis,
    *,
    outcome_key: Key,
    stream: Key,
    stats: Key,
    target: Key,
    notify_list: Key,
    errors: Key,
    recent_drops: Key,
    index_meta: Key,
    content_claim: Key,
    conflicts: KeyList,
    group: Arg[str],
    entry_id: Arg[str],
    op: Arg[str],
    outcome: Arg[str],
    outcome_ttl_s: Arg[int],
    notify: Arg[bool],
    now: Arg[str],
    memory_id: Arg[str],
    source: Arg[str],
    fields: Arg[bytes],
    generation: Arg[str],
    doc_prefix: Arg[str],
    counters: ArgList,
) -> int:
    """
    -- One candidate's state change, outcome, XACK and counters, atomically.
    -- op: index (fields: the doc's field/value pairs as one msgpack array, cheaper to
    -- pack than ~50 arguments) | merge (into target) | drop. conflicts: the memories
    -- the new one contradicts. generation: the index generation the worker embedded for.
    -- -> 1 committed, 0 already committed (only acked), -1 merge target vanished,
    --    -2 the index moved to a new generation (reindex): nothing done,
    --    -3 an active memory already holds this exact text (content_claim names it;
    --       another worker indexed a twin meanwhile): nothing done, merge into it
    if redis.call('EXISTS', outcome_key) == 1 then
      -- A second entry of a committed event (e.g. an append retried by a client) was
      -- counted as accepted: count it processed too, or the backlog never drains.
      if redis.call('XACK', stream, group, entry_id) == 1 then
        redis.call('HINCRBY', stats, 'processed', 1)
      end
      return 0
    end
    if op ~= 'drop' and redis.call('HGET', index_meta, 'generation') ~= generation then
      return -2
    end
    local function append_unique(list, item)
      if item == '' then return list end
      for part in string.gmatch(list, '[^|]+') do
        if part == item then return list end
      end
      if list == '' then return item end
      return list .. '|' .. item
    end
    if op == 'index' then
      local holder = redis.call('GET', content_claim)
      if holder and holder ~= memory_id
         and redis.call('HGET', doc_prefix .. holder, 'status') == 'active' then
        return -3
      end
      redis.call('SET', content_claim, memory_id)
      redis.call('HSET', target, unpack(cmsgpack.unpack(fields)))
      for k = conflicts_first, #KEYS do
        if redis.call('EXISTS', KEYS[k]) == 1 then
          local old = redis.call('HGET', KEYS[k], 'conflicts_with') or ''
          redis.call('HSET', KEYS[k], 'conflicts_with', append_unique(old, memory_id),
                     'review', 'conflict')
        end
      end
    elseif op == 'merge' then
      if redis.call('EXISTS', target) == 0 then return -1 end
      local sources = redis.call('HGET', target, 'sources') or ''
      redis.call('HSET', target, 'sources', append_unique(sources, source),
                 'last_accessed_at', now)
      redis.call('HINCRBY', target, 'access_count', 1)
    elseif op == 'drop' then
      redis.call('XADD', recent_drops, 'MAXLEN', '~', '1000', '*', 'o', outcome)
    end
    redis.call('SET', outcome_key, outcome, 'EX', outcome_ttl_s)
    redis.call('XACK', stream, group, entry_id)
    redis.call('HINCRBY', stats, 'processed', 1)
    for i = counters_first, #ARGV do redis.call('HINCRBY', stats, ARGV[i], 1) end
    redis.call('HDEL', errors, entry_id)
    if notify then
      redis.call('RPUSH', notify_list, outcome)
      redis.call('EXPIRE', notify_list, 300)
    end
    return 1
    """
    ...


@redis_script
async def dead_letter(
    redis: Redis,
    *,
    stream: Key,
    dead_letters: Key,
    stats: Key,
    errors: Key,
    notify_list: Key,
    group: Arg[str],
    entry_id: Arg[str],
    payload: Arg[bytes],
    error: Arg[str],
    deliveries: Arg[int],
    failed_at: Arg[str],
    notify: Arg[bool],
    outcome: Arg[str],
) -> int:
    """
    -- Move a stream entry to the dead letters with its error. -> 1, or 0 if already gone.
    local acked = redis.call('XACK', stream, group, entry_id)
    if acked == 0 then return 0 end
    redis.call('XADD', dead_letters, '*', 'entry_id', entry_id, 'e', payload, 'error', error,
               'deliveries', deliveries, 'failed_at', failed_at)
    redis.call('HINCRBY', stats, 'processed', 1)
    redis.call('HINCRBY', stats, 'dead_lettered', 1)
    redis.call('HDEL', errors, entry_id)
    if notify then
      redis.call('RPUSH', notify_list, outcome)
      redis.call('EXPIRE', notify_list, 300)
    end
    return 1
    """
    ...


@redis_script
async def leave_group(redis: Redis, *, stream: Key, group: Arg[str], consumer: Arg[str]) -> int:
    """
    -- A stopping worker removes its consumer from the group, only when it holds no
    -- entry (deleting a consumer drops its pending entries). -> 1 removed, 0 kept
    local held = redis.call('XPENDING', stream, group, '-', '+', 1, consumer)
    if #held > 0 then return 0 end
    redis.call('XGROUP', 'DELCONSUMER', stream, group, consumer)
    return 1
    """
    ...


@redis_script
async def replay(
    redis: Redis, *, stream: Key, dead_letters: Key, stats: Key, dlq_id: Arg[str]
) -> Any:
    """
    -- Put one dead letter back on the stream. -> its new stream id, or false if absent.
    local entries = redis.call('XRANGE', dead_letters, dlq_id, dlq_id)
    if #entries == 0 then return false end
    local fields = entries[1][2]
    local payload = nil
    for i = 1, #fields, 2 do
      if fields[i] == 'e' then payload = fields[i + 1] end
    end
    if not payload then return false end
    local id = redis.call('XADD', stream, '*', 'e', payload)
    redis.call('HINCRBY', stats, 'replayed', 1)
    redis.call('XDEL', dead_letters, dlq_id)
    return id
    """
    ...
