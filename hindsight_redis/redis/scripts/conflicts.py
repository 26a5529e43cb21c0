"""Lua of conflict review: resolve a flagged pair, and undo a resolution.

Both memories of a pair change in one script, with the log entry that
records who did it, when and why, so a review never leaves half a decision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from redis.asyncio import Redis

from hindsight_redis.redis.lua import Arg, Key, redis_script

F = TypeVar("F", bound=Callable[..., Any])

_LIST_HELPERS = """
    local function has(list, item)
      for part in string.gmatch(list, '[^|]+') do
        if part == item then return true end
      end
      return false
    end
    local function without(list, item)
      local kept = {}
      for part in string.gmatch(list, '[^|]+') do
        if part ~= item then kept[#kept + 1] = part end
      end
      return table.concat(kept, '|')
    end
    local function with(list, item)
      if has(list, item) then return list end
      if list == '' then return item end
      return list .. '|' .. item
    end
    local function field(key, name) return redis.call('HGET', key, name) or '' end
"""


def _with_helpers(fn: F) -> F:
    """Put the list helpers where the body says ``#HELPERS#`` (before the script is built)."""
    assert fn.__doc__ is not None
    fn.__doc__ = fn.__doc__.replace("    #HELPERS#\n", _LIST_HELPERS.lstrip("\n"))
    return fn


@redis_script
@_with_helpers
async def resolve_pair(
    redis: Redis,
    *,
    first: Key,
    second: Key,
    log: Key,
    stats: Key,
    first_id: Arg[str],
    second_id: Arg[str],
    keep: Arg[str],
    now: Arg[str],
    by: Arg[str],
    note: Arg[str],
) -> Any:
    """
    -- Resolve the conflict between two memories. keep: new (the older one is archived,
    -- superseded by the newer), old (the newer one is archived), both (only the flag
    -- goes). The pair moves from conflicts_with to resolved_with on both sides; the
    -- namespace's stats count it ("resolved:<keep>").
    -- -> {1, kept id(s), archived id or ''}, {0} not (or no longer) in conflict,
    --    {-1} a memory is gone
    #HELPERS#
    if redis.call('EXISTS', first) == 0 or redis.call('EXISTS', second) == 0 then
      return {-1}
    end
    if not has(field(first, 'conflicts_with'), second_id)
       and not has(field(second, 'conflicts_with'), first_id) then
      return {0}
    end
    local loser, loser_id, winner_id = nil, '', ''
    if keep ~= 'both' then
      local t1 = tonumber(field(first, 'created_at')) or 0
      local t2 = tonumber(field(second, 'created_at')) or 0
      local first_newer = t1 > t2 or (t1 == t2 and first_id > second_id)
      if (keep == 'new') == first_newer then
        loser, loser_id, winner_id = second, second_id, first_id
      else
        loser, loser_id, winner_id = first, first_id, second_id
      end
    end
    local kept = winner_id
    if keep == 'both' then kept = first_id .. '|' .. second_id end
    for _, side in ipairs({{first, second_id}, {second, first_id}}) do
      local key, other = side[1], side[2]
      local open = without(field(key, 'conflicts_with'), other)
      local record = cjson.encode({keep = keep, other = other, kept = kept,
                                   archived = loser_id, by = by, at = now, note = note})
      local review = ''
      if open ~= '' then review = 'conflict' end
      redis.call('HSET', key, 'conflicts_with', open, 'review', review,
                 'resolved_with', with(field(key, 'resolved_with'), other),
                 'resolution', record)
    end
    if loser ~= nil then
      local reason = 'conflict resolved: superseded by ' .. winner_id
      if keep == 'old' then reason = 'conflict resolved: the older ' .. winner_id .. ' kept' end
      redis.call('HSET', loser, 'status', 'archived', 'archived_at', now,
                 'archive_reason', reason, 'superseded_by', winner_id)
    end
    redis.call('XADD', log, 'MAXLEN', '~', '10000', '*', 'action', 'resolve',
               'memory', first_id, 'other', second_id, 'keep', keep, 'kept', kept,
               'archived', loser_id, 'by', by, 'at', now, 'note', note)
    redis.call('HINCRBY', stats, 'resolved:' .. keep, 1)
    return {1, kept, loser_id}
    """
    ...


@redis_script
@_with_helpers
async def undo_pair(
    redis: Redis,
    *,
    first: Key,
    second: Key,
    log: Key,
    stats: Key,
    first_id: Arg[str],
    second_id: Arg[str],
    now: Arg[str],
    by: Arg[str],
) -> int:
    """
    -- Undo the resolution between two memories: both flagged again, and the one it
    -- archived (superseded_by the other) active again; the namespace's stats count it
    -- ("resolutions_undone"). -> 1 undone, 0 not resolved,
    -- -1 a memory is gone
    #HELPERS#
    if redis.call('EXISTS', first) == 0 or redis.call('EXISTS', second) == 0 then return -1 end
    if not has(field(first, 'resolved_with'), second_id)
       and not has(field(second, 'resolved_with'), first_id) then
      return 0
    end
    for _, side in ipairs({{first, second_id}, {second, first_id}}) do
      local key, other = side[1], side[2]
      redis.call('HSET', key, 'conflicts_with', with(field(key, 'conflicts_with'), other),
                 'review', 'conflict', 'resolution', '',
                 'resolved_with', without(field(key, 'resolved_with'), other))
      if field(key, 'superseded_by') == other then
        redis.call('HSET', key, 'status', 'active', 'archived_at', '', 'archive_reason', '',
                   'superseded_by', '')
      end
    end
    redis.call('XADD', log, 'MAXLEN', '~', '10000', '*', 'action', 'undo',
               'memory', first_id, 'other', second_id, 'keep', '', 'kept', '',
               'archived', '', 'by', by, 'at', now, 'note', '')
    redis.call('HINCRBY', stats, 'resolutions_undone', 1)
    return 1
    """
    ...
