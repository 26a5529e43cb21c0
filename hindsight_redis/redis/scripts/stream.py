"""Lua of the write path and the workers: append, near-duplicate lookups, commit,
dead-letter, leave, replay, trim."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, ArgList, Key, KeyList, redis_script

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


@redis_script
async def drop_at_edge(
    redis: Redis,
    *,
    stats: Key,
    recent_drops: Key,
    writes: KeyList,
    outcome_ttl_s: Arg[int],
    idempotency_ttl_s: Arg[int],
    outcomes: ArgList,
) -> Any:
    """
    -- Writes the write edge dropped (``trust.edge``: a secret, under secrets=drop), recorded
    -- as a worker's drop is (outcome, counter, recent drops) and never appended to the
    -- stream. writes: per write, its outcome key and its idempotency key; outcomes: per
    -- write, its outcome and "1" when it has an idempotency key (else "0").
    -- -> per write: "x:" recorded | "d:<first stream id>" a retry of an earlier write
    --    ("" when that write was dropped here too)
    local replies = {}
    local n = 0
    for i = writes_first, #KEYS, 2 do
      local slot = outcomes_first + 2 * n
      n = n + 1
      local keyed = ARGV[slot + 1] == '1'
      local first = keyed and redis.call('GET', KEYS[i + 1])
      if first then
        replies[n] = 'd:' .. first
      else
        if keyed then redis.call('SET', KEYS[i + 1], '', 'EX', idempotency_ttl_s) end
        redis.call('SET', KEYS[i], ARGV[slot], 'EX', outcome_ttl_s)
        redis.call('XADD', recent_drops, 'MAXLEN', '~', '1000', '*', 'o', ARGV[slot])
        redis.call('HINCRBY', stats, 'dropped:secret', 1)
        replies[n] = 'x:'
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
    stream: Key,
    stats: Key,
    errors: Key,
    recent_drops: Key,
    index_meta: Key,
    access_log: Key,
    merge_log: Key,
    index_latency: Key,
    memories: KeyList,
    group: Arg[str],
    outcome_ttl_s: Arg[int],
    now: Arg[str],
    generation: Arg[str],
    doc_prefix: Arg[str],
    batch: Arg[bytes],
) -> list[int]:
    """
    -- Candidates' state changes, outcomes, XACKs and counters, atomically and in order
    -- (a candidate may merge into an earlier one of the same call).
    -- batch: msgpack array, per candidate {entry_id, op, outcome, notify, memory_id, source,
    -- fields, conflicts, counters, latency bucket, latency}; op: index (fields: the doc's
    -- field/value pairs; its write-to-searchable seconds counted in the index_latency
    -- histogram: the bucket's field, and "sum") | merge
    -- (into target: counted in access_log, its source pending in merge_log) | drop |
    -- hold (target: the held hash; fields: the held write, stored under the memory id).
    -- An indexed write gets no outcome key: its memory (target) records it, and guards it.
    -- memories: per candidate its outcome key, target (the memory written or merged
    -- into), notify list and content claim, then the keys of the
    -- `conflicts` memories the new one contradicts. generation: the index generation the
    -- worker embedded for.
    -- An entry no longer in the stream was erased (trust.erasure) while in hand: it is
    -- only acknowledged, never indexed, merged or logged.
    -- -> per candidate: 1 committed, 0 already committed or erased (only acked), -1 merge
    --    target vanished, -2 the index moved to a new generation (reindex): nothing done,
    --    -3 an active memory already holds this exact text (its content claim names it;
    --       another worker indexed a twin meanwhile): nothing done, merge into it
    local function append_unique(list, item)
      if item == '' then return list end
      for part in string.gmatch(list, '[^|]+') do
        if part == item then return list end
      end
      if list == '' then return item end
      return list .. '|' .. item
    end
    local live = redis.call('HGET', index_meta, 'generation') == generation
    local results = {}
    local k = memories_first
    for n, item in ipairs(cmsgpack.unpack(batch)) do
      local entry_id, op, outcome, notify, memory_id = item[1], item[2], item[3], item[4], item[5]
      local outcome_key, target, notify_list, claim = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
      local conflicts_first, conflicts_last = k + 4, k + 3 + item[8]
      k = conflicts_last + 1
      local result = 1
      -- An indexed write's memory is its record (no outcome key: 190 bytes a memory).
      if redis.call('EXISTS', outcome_key) == 1
         or (op == 'index' and redis.call('EXISTS', target) == 1) then
        -- A second entry of a committed event (e.g. an append retried by a client) was
        -- counted as accepted: count it processed too, or the backlog never drains.
        if redis.call('XACK', stream, group, entry_id) == 1 then
          redis.call('HINCRBY', stats, 'processed', 1)
        end
        result = 0
      elseif #redis.call('XRANGE', stream, entry_id, entry_id) == 0 then
        if redis.call('XACK', stream, group, entry_id) == 1 then
          redis.call('HINCRBY', stats, 'processed', 1)
        end
        result = 0
      elseif op ~= 'drop' and op ~= 'hold' and not live then
        result = -2
      elseif op == 'hold' then
        redis.call('HSET', target, memory_id, item[7][1])
      elseif op == 'index' then
        local holder = redis.call('GET', claim)
        if holder and holder ~= memory_id
           and redis.call('HGET', doc_prefix .. holder, 'status') == 'active' then
          result = -3
        else
          -- The claim settles a race of two workers over one text; later twins meet the
          -- memory in the dedup stage's lookup, so it lasts as long as an outcome.
          redis.call('SET', claim, memory_id, 'EX', outcome_ttl_s)
          redis.call('HSET', target, unpack(item[7]))
          for c = conflicts_first, conflicts_last do
            if redis.call('EXISTS', KEYS[c]) == 1 then
              local old = redis.call('HGET', KEYS[c], 'conflicts_with') or ''
              redis.call('HSET', KEYS[c], 'conflicts_with', append_unique(old, memory_id),
                         'review', 'conflict')
            end
          end
        end
      elseif op == 'merge' then
        if redis.call('EXISTS', target) == 0 then
          result = -1
        else
          -- Logged, not written: a write to the hash re-indexes the memory (both vectors
          -- too), so the access log's fold writes it once for all its merges and hits.
          local into = string.sub(target, #doc_prefix + 1)
          redis.call('HINCRBY', access_log, into, 1)
          if item[6] ~= '' then
            local pending = redis.call('HGET', merge_log, into) or ''
            redis.call('HSET', merge_log, into, append_unique(pending, item[6]))
          end
        end
      else
        redis.call('XADD', recent_drops, 'MAXLEN', '~', '1000', '*', 'o', outcome)
      end
      if result == 1 then
        if op ~= 'index' then redis.call('SET', outcome_key, outcome, 'EX', outcome_ttl_s) end
        redis.call('XACK', stream, group, entry_id)
        redis.call('HINCRBY', stats, 'processed', 1)
        for _, counter in ipairs(item[9]) do redis.call('HINCRBY', stats, counter, 1) end
        if op == 'index' and item[10] ~= '' then
          redis.call('HINCRBY', index_latency, item[10], 1)
          redis.call('HINCRBYFLOAT', index_latency, 'sum', item[11])
        end
        redis.call('HDEL', errors, entry_id)
        if notify then
          redis.call('RPUSH', notify_list, outcome)
          redis.call('EXPIRE', notify_list, 300)
        end
      end
      results[n] = result
    end
    return results
    """
    ...


@redis_script
async def neighbours(
    redis: Redis,
    *,
    index_meta: Key,
    index: Arg[str],
    query: Arg[str],
    k: Arg[int],
    vectors: Arg[bytes],
) -> list[list[bytes]]:
    """
    -- The k nearest active memories of each vector (vectors: a msgpack array), by the
    -- KNN `query` over `index` (its vector as $BLOB): one call for many lookups, whose
    -- ~20 arguments each would cost the client more to send than the search costs here.
    -- index_meta is not read: it routes the call to the namespace's shard.
    -- -> per vector a flat list, per memory: key, distance, visibility, agent_id,
    --    content, tags ('' when absent)
    local out = {}
    for i, vector in ipairs(cmsgpack.unpack(vectors)) do
      local reply = redis.call('FT.SEARCH', index, query, 'PARAMS', '2', 'BLOB', vector,
                               'SORTBY', '__d', 'ASC', 'LIMIT', '0', k,
                               'RETURN', '6', '__d', 'status', 'visibility', 'agent_id',
                               'content', 'tags', 'DIALECT', '2')
      local rows = {}
      for r = 2, #reply, 2 do
        local fields, row = reply[r + 1], {}
        for f = 1, #fields, 2 do row[fields[f]] = fields[f + 1] end
        if row.status == 'active' then
          local n = #rows
          rows[n + 1], rows[n + 2] = reply[r], row.__d or ''
          rows[n + 3], rows[n + 4] = row.visibility or '', row.agent_id or ''
          rows[n + 5], rows[n + 6] = row.content or '', row.tags or ''
        end
      end
      out[i] = rows
    end
    return out
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
    -- Move a stream entry to the dead letters with its error. -> 1, or 0 if already gone
    -- (acknowledged, or erased: trust.erasure; then nothing of it is kept).
    local acked = redis.call('XACK', stream, group, entry_id)
    if acked == 0 then return 0 end
    if #redis.call('XRANGE', stream, entry_id, entry_id) == 0 then
      redis.call('HINCRBY', stats, 'processed', 1)
      redis.call('HDEL', errors, entry_id)
      return 0
    end
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


@redis_script
async def trim_acked(redis: Redis, *, stream: Key, keep_below: Arg[int]) -> int:
    """
    -- Trim the entries every group has acknowledged, once the stream holds more than
    -- keep_below entries: below the oldest entry some group has pending or has not been
    -- delivered yet (the last one delivered too, once acknowledged), never an unprocessed
    -- one. One call: cheap enough after every batch. -> entries trimmed
    local function parts(id)
      local ms, seq = string.match(id, '^(%d+)-(%d+)$')
      return tonumber(ms), tonumber(seq)
    end
    local function older(a, b)
      local am, as = parts(a)
      local bm, bs = parts(b)
      if am < bm or (am == bm and as < bs) then return a end
      return b
    end
    if redis.call('XLEN', stream) <= keep_below then return 0 end
    local boundary = nil
    for _, raw in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
      local g = {}
      for i = 1, #raw, 2 do g[raw[i]] = raw[i + 1] end
      local ms, seq = parts(g['last-delivered-id'])
      local limit = string.format('%d-%d', ms, seq + 1)  -- the first id not delivered
      if tonumber(g['pending']) > 0 then
        local first = redis.call('XPENDING', stream, g['name'])[2]
        if first then limit = older(limit, first) end
      end
      boundary = (boundary and older(boundary, limit)) or limit
    end
    if not boundary then return 0 end
    return redis.call('XTRIM', stream, 'MINID', boundary)
    """
    ...
