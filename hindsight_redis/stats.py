"""Counters and stream state of a namespace, for ``stats()`` and the CLI."""

from __future__ import annotations

import time
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from hindsight_redis.codec import as_text
from hindsight_redis.index import reply_map
from hindsight_redis.keys import Keys
from hindsight_redis.query import refine_pending_filter


def _entry_ms(entry_id: str) -> int:
    return int(entry_id.split("-", 1)[0])


async def collect_stats(redis: aioredis.Redis, keys: Keys) -> dict[str, Any]:
    """What a namespace holds and how far behind its workers are.

    Keys: ``accepted``, ``processed``, ``indexed``, ``merged``, ``dropped`` (a
    mapping reason -> count, plus ``total``), ``backlog`` (accepted writes not
    yet processed), ``pending`` (delivered, not acknowledged; per consumer in
    ``consumers``), ``undelivered``, ``dead_letters``, ``stream_length``,
    ``index_lag_s`` (age of the oldest unprocessed entry), ``refine_pending``
    (memories still waiting for their contextual vector; None without an
    index) and ``counters``.
    """
    pipe = redis.pipeline(transaction=False)
    pipe.hgetall(keys.stats)
    pipe.xlen(keys.stream)
    pipe.xlen(keys.dead_letters)
    counters_raw, stream_length, dead_letters = await pipe.execute()
    counters = {as_text(k): int(v) for k, v in counters_raw.items()}
    counters["accepted"] = await entries_added(redis, keys)
    dropped = {
        k.removeprefix("dropped:"): v for k, v in counters.items() if k.startswith("dropped:")
    }
    dropped["total"] = sum(dropped.values())
    pending, undelivered, consumers, oldest = await _group_state(redis, keys)
    accepted = counters.get("accepted", 0)
    processed = counters.get("processed", 0)
    return {
        "accepted": accepted,
        "processed": processed,
        "indexed": counters.get("indexed", 0),
        "merged": counters.get("merged", 0),
        "dropped": dropped,
        "backlog": max(accepted - processed, 0),
        "pending": pending,
        "undelivered": undelivered,
        "consumers": consumers,
        "dead_letters": int(dead_letters),
        "stream_length": int(stream_length),
        "index_lag_s": 0.0 if oldest is None else max(time.time() - oldest / 1000, 0.0),
        "refine_pending": await refine_pending(redis, keys),
        "counters": counters,
    }


async def refine_pending(redis: aioredis.Redis, keys: Keys) -> int | None:
    """Memories whose ``refine`` tag is still ``pending``; None when there is no index."""
    query = refine_pending_filter(keys.namespace)
    try:
        reply = await redis.execute_command(  # type: ignore[no-untyped-call]
            "FT.SEARCH", keys.index_alias, query, "LIMIT", "0", "0", "DIALECT", "2"
        )
    except ResponseError:
        return None  # no index yet (or one from before contextual vectors)
    if isinstance(reply, dict):
        return int(reply_map(reply).get("total_results", 0))
    return int(reply[0])


async def entries_added(redis: aioredis.Redis, keys: Keys) -> int:
    """Writes ever appended to the stream (trimming does not lower it); 0 without a stream."""
    try:
        info: dict[Any, Any] = await redis.xinfo_stream(keys.stream)
    except ResponseError:
        return 0
    return int(info.get("entries-added") or info.get(b"entries-added") or 0)


async def backlog(redis: aioredis.Redis, keys: Keys) -> int:
    """Accepted writes not yet processed (indexed, merged, dropped or dead-lettered).

    One round trip: the write gate refreshes it while writers wait.
    """
    pipe = redis.pipeline(transaction=False)
    pipe.xinfo_stream(keys.stream)
    pipe.hget(keys.stats, "processed")
    info, processed = await pipe.execute(raise_on_error=False)
    if isinstance(info, ResponseError):
        return 0  # no stream yet: nothing accepted
    if isinstance(info, Exception):
        raise info
    added = int(info.get("entries-added") or info.get(b"entries-added") or 0)
    return max(added - int(processed or 0), 0)


async def _group_state(
    redis: aioredis.Redis, keys: Keys
) -> tuple[int, int, dict[str, int], int | None]:
    """(pending, undelivered, pending per consumer, ms of the oldest unprocessed entry)."""
    try:
        groups = await redis.xinfo_groups(keys.stream)
    except ResponseError:
        return 0, 0, {}, None  # no stream yet
    group = next((g for g in groups if as_text(g["name"]) == keys.group), None)
    if group is None:
        first = await redis.xrange(keys.stream, count=1)
        first_ms = _entry_ms(as_text(first[0][0])) if first else None
        return 0, int(await redis.xlen(keys.stream)), {}, first_ms
    pending = int(group["pending"])
    undelivered = int(group.get("lag") or 0)
    consumers: dict[str, int] = {}
    oldest: int | None = None
    if pending:
        summary = await redis.xpending(keys.stream, keys.group)
        consumers = {as_text(c["name"]): int(c["pending"]) for c in summary["consumers"] or []}
        if summary["min"] is not None:  # entries may be acked between the two calls
            oldest = _entry_ms(as_text(summary["min"]))
    if undelivered and oldest is None:
        after = as_text(group["last-delivered-id"])
        nxt = await redis.xrange(keys.stream, min=f"({after}", count=1)
        if nxt:
            oldest = _entry_ms(as_text(nxt[0][0]))
    return pending, undelivered, consumers, oldest
