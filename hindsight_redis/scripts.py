"""Lua scripts that make each state change atomic.

Pure module: only script sources. Every key a script touches is passed in
KEYS and shares the namespace hash tag, so the scripts also run on a cluster.
"""

from __future__ import annotations

# Accepted writes are counted by the stream itself (XINFO STREAM entries-added);
# the backlog is that minus the workers' "processed" counter.
# KEYS: stream, stats, then one idempotency key per write
# ARGV: max_backlog, idempotency ttl (s), then per write: payload, has key ("1"/"0")
# -> "b:<backlog>" when the backlog is at its limit (nothing written), else one
#    reply per write: "a:<stream id>" accepted | "d:<first stream id>" duplicate
WRITE = """
local added = 0
local ok, info = pcall(redis.call, 'XINFO', 'STREAM', KEYS[1])
if ok then
  for i = 1, #info, 2 do
    if info[i] == 'entries-added' then added = tonumber(info[i + 1]) end
  end
end
local processed = tonumber(redis.call('HGET', KEYS[2], 'processed') or '0')
local backlog = added - processed
if backlog >= tonumber(ARGV[1]) then return 'b:' .. backlog end
local ttl = tonumber(ARGV[2])
local replies = {}
for i = 3, #KEYS do
  local payload = ARGV[2 * i - 3]
  local keyed = ARGV[2 * i - 2] == '1'
  local first = keyed and redis.call('GET', KEYS[i])
  if first then
    replies[#replies + 1] = 'd:' .. first
  else
    local id = redis.call('XADD', KEYS[1], '*', 'e', payload)
    if keyed then redis.call('SET', KEYS[i], id, 'EX', ttl) end
    replies[#replies + 1] = 'a:' .. id
  end
end
return replies
"""

# KEYS: outcome, stream, stats, target doc, notify list, errors hash, recent drops,
#       index meta, then the docs of memories the new one conflicts with
# ARGV: group, entry id, op (index|merge|drop), outcome json, outcome ttl (s),
#       notify ("1"/"0"), now, memory id, source, n extra counters, counters...,
#       then for op=index the doc's field/value pairs as one msgpack array
#       (one argument instead of ~50 keeps the client's packing cheap), and last
#       the index generation the worker embedded for
# -> 1 committed, 0 already committed (only acked), -1 merge target vanished,
#    -2 the index moved to a new generation (reindex): nothing done
COMMIT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
  return 0
end
local op = ARGV[3]
if op ~= 'drop' and redis.call('HGET', KEYS[8], 'generation') ~= ARGV[#ARGV] then
  return -2
end
local ncounters = tonumber(ARGV[10])
local first_field = 11 + ncounters
local function append_unique(list, item)
  if item == '' then return list end
  for part in string.gmatch(list, '[^|]+') do
    if part == item then return list end
  end
  if list == '' then return item end
  return list .. '|' .. item
end
if op == 'index' then
  local fields = cmsgpack.unpack(ARGV[first_field])
  redis.call('HSET', KEYS[4], unpack(fields))
  for k = 9, #KEYS do
    if redis.call('EXISTS', KEYS[k]) == 1 then
      local old = redis.call('HGET', KEYS[k], 'conflicts_with') or ''
      redis.call('HSET', KEYS[k], 'conflicts_with', append_unique(old, ARGV[8]),
                 'review', 'conflict')
    end
  end
elseif op == 'merge' then
  if redis.call('EXISTS', KEYS[4]) == 0 then return -1 end
  local sources = redis.call('HGET', KEYS[4], 'sources') or ''
  redis.call('HSET', KEYS[4], 'sources', append_unique(sources, ARGV[9]),
             'last_accessed_at', ARGV[7])
  redis.call('HINCRBY', KEYS[4], 'access_count', 1)
elseif op == 'drop' then
  redis.call('XADD', KEYS[7], 'MAXLEN', '~', '1000', '*', 'o', ARGV[4])
end
redis.call('SET', KEYS[1], ARGV[4], 'EX', tonumber(ARGV[5]))
redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[3], 'processed', 1)
for i = 11, 10 + ncounters do redis.call('HINCRBY', KEYS[3], ARGV[i], 1) end
redis.call('HDEL', KEYS[6], ARGV[2])
if ARGV[6] == '1' then
  redis.call('RPUSH', KEYS[5], ARGV[4])
  redis.call('EXPIRE', KEYS[5], 300)
end
return 1
"""

# KEYS: stream, dead letters, stats, errors hash, notify list (or any key of the tag)
# ARGV: group, entry id, payload, error, deliveries, now, notify ("1"/"0"), outcome json
DEAD_LETTER = """
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if acked == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', 'entry_id', ARGV[2], 'e', ARGV[3], 'error', ARGV[4],
           'deliveries', ARGV[5], 'failed_at', ARGV[6])
redis.call('HINCRBY', KEYS[3], 'processed', 1)
redis.call('HINCRBY', KEYS[3], 'dead_lettered', 1)
redis.call('HDEL', KEYS[4], ARGV[2])
if ARGV[7] == '1' then
  redis.call('RPUSH', KEYS[5], ARGV[8])
  redis.call('EXPIRE', KEYS[5], 300)
end
return 1
"""

# KEYS: stream, dead letters, stats
# ARGV: dead-letter entry id
# -> new stream id, or false when the dead letter does not exist
REPLAY = """
local entries = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])
if #entries == 0 then return false end
local fields = entries[1][2]
local payload = nil
for i = 1, #fields, 2 do
  if fields[i] == 'e' then payload = fields[i + 1] end
end
if not payload then return false end
local id = redis.call('XADD', KEYS[1], '*', 'e', payload)
redis.call('HINCRBY', KEYS[3], 'replayed', 1)
redis.call('XDEL', KEYS[2], ARGV[1])
return id
"""

# KEYS: a memory hash; ARGV: field/value pairs
# -> 1 updated, 0 no such memory (a plain HSET on a missing key would create one)
UPDATE_EXISTING = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

# Store a memory's contextual vector (pipeline.refine). Skipped (0) when the
# memory is gone or its content is not the text that was embedded; refused
# (-1) when the index now records another contextual model (a reindex
# switched it), so a stale refiner never writes vectors of the wrong model.
# KEYS: doc, index meta. ARGV: content, field, vector, model.
REFINE = """
if redis.call('HGET', KEYS[2], 'context_model') ~= ARGV[4] then return -1 end
if redis.call('HGET', KEYS[1], 'content') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3], 'refine', 'done')
return 1
"""
