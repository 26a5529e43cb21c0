"""Lua of erasure (``trust.erasure``): streams rebuilt without erased entries, and the
memories that stay unlinked from the erased ones.

``XDEL`` and ``XTRIM`` only flag an entry deleted inside its node: its bytes
stay (in ``DUMP``, the RDB file, a replica's copy) until every entry of the
node is gone. So a stream that held erased content is rebuilt: its live
entries copied, ids kept, into a scratch stream that replaces it, with the
stream's counters and every consumer group as they were.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, ArgList, Key, KeyList, redis_script


@redis_script
async def rebuild_stream(
    redis: Redis,
    *,
    stream: Key,
    scratch: Key,
    stats: Key,
    group: Arg[str],
    drop: ArgList,
) -> Any:
    """
    -- Rebuild `stream` without the entries `drop` names (entry ids), into `scratch`, then
    -- rename it over the stream: same last id, entries-added count and groups (last
    -- delivered id, entries read, consumers, the pending entries kept with their consumer,
    -- idle time and deliveries). A dropped entry no group read (or with no group yet)
    -- leaves the entries-added count, as if never written; one that `group` (the
    -- workers) holds or never got is counted processed in `stats` (it never will be); so
    -- is a pending entry of `group` whose entry was deleted before.
    -- -> {entries dropped, counted processed, never read}
    local function parts(id)
      local ms, seq = string.match(id, '^(%d+)-(%d+)$')
      return tonumber(ms), tonumber(seq)
    end
    local function before(a, b)
      local am, as = parts(a)
      local bm, bs = parts(b)
      return am < bm or (am == bm and as < bs)
    end
    local function map(flat)
      local m = {}
      for i = 1, #flat, 2 do m[flat[i]] = flat[i + 1] end
      return m
    end
    if redis.call('EXISTS', stream) == 0 then return {0, 0, 0} end
    local wanted = {}
    for i = drop_first, #ARGV do wanted[ARGV[i]] = true end
    local info = map(redis.call('XINFO', 'STREAM', stream))
    local groups, furthest = {}, nil
    for _, raw in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
      local g = map(raw)
      groups[#groups + 1] = g
      if not furthest or before(furthest, g['last-delivered-id']) then
        furthest = g['last-delivered-id']
      end
    end
    redis.call('DEL', scratch)
    local dropped, unread, max_deleted = {}, 0, info['max-deleted-entry-id']
    local start = '-'
    while true do
      local page = redis.call('XRANGE', stream, start, '+', 'COUNT', 1000)
      for _, entry in ipairs(page) do
        local id = entry[1]
        if wanted[id] then
          local never_read = furthest == nil or before(furthest, id)
          dropped[#dropped + 1] = {id, never_read}
          if never_read then
            unread = unread + 1
          elseif before(max_deleted, id) then
            max_deleted = id
          end
        else
          redis.call('XADD', scratch, id, unpack(entry[2]))
        end
      end
      if #page < 1000 then break end
      start = '(' .. page[#page][1]
    end
    if redis.call('EXISTS', scratch) == 0 then  -- every entry dropped: the stream stays
      redis.call('XADD', scratch, '0-1', 'x', '')
      redis.call('XDEL', scratch, '0-1')
    end
    redis.call('XSETID', scratch, info['last-generated-id'],
               'ENTRIESADDED', tonumber(info['entries-added']) - unread,
               'MAXDELETEDID', max_deleted)
    local counted = 0
    for _, g in ipairs(groups) do
      local name, last = g['name'], g['last-delivered-id']
      if g['entries-read'] then
        redis.call('XGROUP', 'CREATE', scratch, name, last, 'ENTRIESREAD', g['entries-read'])
      else
        redis.call('XGROUP', 'CREATE', scratch, name, last)
      end
      for _, raw in ipairs(redis.call('XINFO', 'CONSUMERS', stream, name)) do
        redis.call('XGROUP', 'CREATECONSUMER', scratch, name, map(raw)['name'])
      end
      if tonumber(g['pending']) > 0 then
        for _, p in ipairs(redis.call('XPENDING', stream, name, '-', '+', g['pending'])) do
          local kept = not wanted[p[1]] and #redis.call(
            'XCLAIM', scratch, name, p[2], 0, p[1], 'IDLE', p[3], 'RETRYCOUNT', p[4],
            'FORCE', 'JUSTID') == 1
          if not kept and name == group then counted = counted + 1 end
        end
      end
      if name == group then
        for _, d in ipairs(dropped) do
          if not d[2] and before(last, d[1]) then counted = counted + 1 end
        end
      end
    end
    redis.call('RENAME', scratch, stream)
    if counted > 0 then redis.call('HINCRBY', stats, 'processed', counted) end
    return {#dropped, counted, unread}
    """
    ...


@redis_script
async def unlink_erased(
    redis: Redis,
    *,
    merge_log: Key,
    memories: KeyList,
    ids: Arg[bytes],
    erased: Arg[bytes],
    sources: Arg[bytes],
) -> int:
    """
    -- Unlink memories that stay from erased ones. ids: msgpack array of the memories' ids
    -- (their keys in `memories`); erased: msgpack array of the erased ids, gone from each
    -- memory's conflicts_with and resolved_with (review too, once no conflict is open),
    -- superseded_by, and its last resolution (its note may quote them); sources: per
    -- memory, the sources of erased writes merged into it, gone from its sources and its
    -- pending merges (merge_log) unless the memory itself came from it. One HSET/HDEL per
    -- memory; memories deleted meanwhile are skipped. -> how many changed
    local gone = {}
    for _, id in ipairs(cmsgpack.unpack(erased)) do gone[id] = true end
    local names, drops = cmsgpack.unpack(ids), cmsgpack.unpack(sources)
    local function without(list, drop, own)
      local kept = {}
      for part in string.gmatch(list, '[^|]+') do
        if not drop[part] or part == own then kept[#kept + 1] = part end
      end
      return table.concat(kept, '|')
    end
    local function mentions(raw)
      local ok, r = pcall(cjson.decode, raw)
      if not ok or type(r) ~= 'table' then return false end
      if gone[r.other] or gone[r.archived] then return true end
      for part in string.gmatch(tostring(r.kept or ''), '[^|]+') do
        if gone[part] then return true end
      end
      return false
    end
    local changed = 0
    for i = memories_first, #KEYS do
      local n = i - memories_first + 1
      local from = {}
      for _, s in ipairs(drops[n] or {}) do from[s] = true end
      local v = redis.call('HMGET', KEYS[i], 'conflicts_with', 'resolved_with', 'superseded_by',
                           'resolution', 'sources', 'source', 'review')
      local set, del = {}, {}
      local function put(name, old, new)
        if old and old ~= new then
          if new == '' then del[#del + 1] = name else
            set[#set + 1] = name
            set[#set + 1] = new
          end
        end
      end
      local open = v[1] and without(v[1], gone, nil)
      put('conflicts_with', v[1], open)
      put('resolved_with', v[2], v[2] and without(v[2], gone, nil))
      if v[3] and gone[v[3]] then del[#del + 1] = 'superseded_by' end
      if v[4] and v[4] ~= '' and mentions(v[4]) then del[#del + 1] = 'resolution' end
      put('sources', v[5], v[5] and without(v[5], from, v[6]))
      if v[7] == 'conflict' and (open or '') == '' then del[#del + 1] = 'review' end
      local exists = redis.call('EXISTS', KEYS[i]) == 1
      if exists and (#set > 0 or #del > 0) then
        if #del > 0 then redis.call('HDEL', KEYS[i], unpack(del)) end
        if #set > 0 then redis.call('HSET', KEYS[i], unpack(set)) end
        changed = changed + 1
      end
      local pending = redis.call('HGET', merge_log, names[n])
      if exists and pending then
        local left = without(pending, from, v[6])
        if left == '' then redis.call('HDEL', merge_log, names[n])
        elseif left ~= pending then redis.call('HSET', merge_log, names[n], left) end
      end
    end
    return changed
    """
    ...
