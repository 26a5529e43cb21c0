"""The operators' reads and repairs: stats, dead letters, conflicts flagged for review.

Every call goes through the error boundary (``errors.redis_errors``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.codec import decode_event, decode_outcome
from hindsight_redis.core.documents import RECORD_FIELDS, record_from_fields
from hindsight_redis.core.keys import Keys, namespace_registry
from hindsight_redis.core.models import MemoryRecord
from hindsight_redis.core.resp import (
    NEVER_DECODE,
    as_text,
    search_rows,
)
from hindsight_redis.errors import (
    InvalidArgument,
    PoisonMessage,
    RedisCommandError,
    redis_errors,
)
from hindsight_redis.index.filters import tag_clause
from hindsight_redis.index.record import recorded_index
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.ops.health import health_of, read_staleness
from hindsight_redis.ops.stats import read_llm_spend, read_queue_states
from hindsight_redis.providers.spend import SpendBudget
from hindsight_redis.redis import scripts
from hindsight_redis.redis.cluster import list_indexes
from hindsight_redis.search.query import newest_command

_STREAM_ID = re.compile(r"\d{1,20}(-\d{1,20})?")


# -- stats ----------------------------------------------------------------------


async def collect_stats(
    redis: Redis,
    keys: Keys,
    *,
    live_within_ms: int = 30_000,
    budget: SpendBudget | None = None,
    retention: RetentionPolicy | None = None,
    sweep_threshold: float | None = None,
) -> dict[str, Any]:
    """What a namespace holds and how far behind its workers are.

    Keys: ``accepted``, ``processed``, ``indexed``, ``merged``, ``dropped`` (a
    mapping reason -> count, plus ``total``), ``held`` (writes held for review),
    ``approved`` and ``rejected`` (of them, by a person), ``backlog`` (accepted writes not
    yet processed), ``pending`` (delivered, not acknowledged; per consumer in
    ``consumers``), ``undelivered``, ``dead_letters``, ``stream_length``,
    ``index_lag_s`` (age of the oldest unprocessed entry), ``refine_pending``
    (memories still waiting for their contextual vector; None without an
    index), ``refine_lag_s`` (age of the oldest of them; 0: none),
    ``refine_drafts`` (memories with a draft contextual vector, waiting for the exact one),
    ``refine_chinese`` (Chinese memories waiting for their multilingual vector),
    ``memories`` (``active``, ``archived``, ``protected``; None without an index),
    ``workers`` (the consumers seen within ``live_within_ms``: name, pending,
    idle_s), ``idle_consumers`` (the others: crashed or stopped
    workers that left entries, until reclaimed), ``counters``, ``llm_spend`` (today's,
    against ``budget``: ``stats.read_llm_spend``) and ``health`` (``health.health_of``: its
    stale fraction sampled with ``retention`` against ``sweep_threshold``, when both are
    given).
    """
    (state,) = await read_queue_states(redis, [keys])
    everyone = await _consumers(redis, keys)
    dropped = state.dropped
    dropped["total"] = sum(dropped.values())
    return {
        "accepted": state.accepted,
        "processed": state.counters.get("processed", 0),
        "indexed": state.counters.get("indexed", 0),
        "merged": state.counters.get("merged", 0),
        "dropped": dropped,
        "held": state.counters.get("held", 0),
        "approved": state.counters.get("approved", 0),
        "rejected": state.counters.get("rejected", 0),
        "backlog": state.backlog,
        "pending": state.pending,
        "undelivered": state.undelivered,
        "consumers": state.consumers,
        "dead_letters": state.dead_letters,
        "stream_length": state.stream_length,
        "index_lag_s": state.lag_s(time.time()),
        "refine_pending": state.refine_pending,
        "refine_lag_s": state.refine_lag_s(time.time()),
        "refine_drafts": state.refine_drafts,
        "refine_chinese": state.refine_chinese,
        "memories": state.memories,
        "workers": [c for c in everyone if c["idle_s"] * 1000 <= live_within_ms],
        "idle_consumers": sum(1 for c in everyone if c["idle_s"] * 1000 > live_within_ms),
        "counters": state.counters,
        "llm_spend": await read_llm_spend(redis, keys, budget),
        "health": health_of(
            state, await read_staleness(redis, keys, retention, sweep_threshold), time.time()
        ),
    }


async def why_no_hit(redis: Redis, keys: Keys, *, live_within_ms: int = 30_000) -> str | None:
    """Why a search of the namespace found nothing, when a few cheap reads can tell: it was
    never written to (and which namespaces were), writes still wait for a worker (and
    whether one is live), or every write was dropped. None when none of these holds."""
    stats = await collect_stats(redis, keys, live_within_ms=live_within_ms)
    stored = sum((stats["memories"] or {}).get(k, 0) for k in ("active", "archived"))
    if not stats["accepted"] and not stored:
        # Imported here: the worker's modules are not loaded by the library's import.
        from hindsight_redis.pipeline.namespaces import registered

        others = [n for n in await registered(redis, keys.prefix) if n != keys.namespace]
        listed = ", ".join(others[:20]) + (
            f" and {len(others) - 20} more" if len(others) > 20 else ""
        )
        return f"namespace {keys.namespace!r} has never been written to" + (
            f" (namespaces: {listed})" if others else ""
        )
    waiting, workers = stats["backlog"], len(stats["workers"])
    if waiting and not workers:
        return f"{waiting:,} write(s) waiting and no live worker: start `hindsight-redis worker`"
    if waiting:
        return f"{waiting:,} write(s) still being processed by {workers} live worker(s)"
    if stats["accepted"] and not stored and not stats["indexed"]:
        dropped, held = stats["dropped"]["total"], stats["held"]
        return (
            f"nothing indexed yet: of {stats['accepted']:,} write(s), {dropped:,} dropped by "
            f"the filters, {held:,} held for review (`hindsight-redis stats`)"
        )
    return None


async def _consumers(redis: Redis, keys: Keys) -> list[dict[str, Any]]:
    """Every consumer of the workers' group: name, pending entries, seconds since last seen."""
    try:
        with redis_errors("list the workers"):
            found = await redis.xinfo_consumers(keys.stream, keys.group)
    except RedisCommandError:
        return []  # no stream or no group yet
    return sorted(
        (
            {
                "name": as_text(c["name"]),
                "pending": int(c["pending"]),
                "idle_s": round(int(c["idle"]) / 1000, 3),
            }
            for c in found
        ),
        key=lambda c: c["name"],
    )


# -- dead letters -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """One dead-lettered write, with the error that put it there."""

    id: str
    entry_id: str
    error: str
    deliveries: int
    failed_at: float
    content: str | None
    memory_id: str | None


def _dead_letter(dlq_id: str, fields: dict[bytes, bytes]) -> DeadLetter:
    try:
        event = decode_event(fields)
        content, memory_id = event.content, event.event_id
    except PoisonMessage:
        content, memory_id = None, None
    return DeadLetter(
        id=dlq_id,
        entry_id=as_text(fields.get(b"entry_id", b"")),
        error=as_text(fields.get(b"error", b"")),
        deliveries=int(fields.get(b"deliveries", b"0") or 0),
        failed_at=float(fields.get(b"failed_at", b"0") or 0),
        content=content,
        memory_id=memory_id,
    )


async def list_dead_letters(redis: Redis, keys: Keys, count: int = 100) -> list[DeadLetter]:
    """The oldest ``count`` dead letters."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InvalidArgument(f"count must be a positive integer, got {count!r}")
    with redis_errors("list dead letters"):
        entries: Any = await redis.xrange(keys.dead_letters, count=count)
    return [_dead_letter(as_text(i), f) for i, f in entries or []]


async def replay_dead_letters(redis: Redis, keys: Keys, ids: list[str] | None = None) -> list[str]:
    """Put dead letters back on the stream (all when ``ids`` is None); their new stream ids.

    Ids that name no dead letter are skipped; an id that is not a stream id
    (``<ms>-<seq>``) is an ``InvalidArgument``.
    """
    for dlq_id in ids or ():
        if not isinstance(dlq_id, str) or not _STREAM_ID.fullmatch(dlq_id):
            raise InvalidArgument(
                f"{dlq_id!r} is not a dead-letter id (ids look like 1767225600000-0: "
                "see `hindsight-redis dlq list`)"
            )
    with redis_errors("replay dead letters"):
        if ids is None:
            entries: Any = await redis.xrange(keys.dead_letters)
            ids = [as_text(i) for i, _ in entries or []]
        replayed = []
        for dlq_id in ids:
            new_id = await scripts.replay(
                redis,
                stream=keys.stream,
                dead_letters=keys.dead_letters,
                stats=keys.stats,
                dlq_id=dlq_id,
            )
            if new_id:
                replayed.append(as_text(new_id))
    return replayed


# -- conflicts ----------------------------------------------------------------------


async def list_conflicts(
    redis: Redis, keys: Keys, *, limit: int = 100, include_archived: bool = False
) -> list[MemoryRecord]:
    """Memories flagged ``review=conflict``, newest first, with ``conflicts_with`` ids."""
    expr = f"{tag_clause('namespace', keys.namespace)} {tag_clause('review', 'conflict')}"
    return await _newest(redis, keys, expr, limit, include_archived, "list conflicts")


async def recent_memories(
    redis: Redis, keys: Keys, *, limit: int = 50, include_archived: bool = False
) -> list[MemoryRecord]:
    """The newest stored memories (every visibility: an operator's view), newest first."""
    expr = tag_clause("namespace", keys.namespace)
    return await _newest(redis, keys, expr, limit, include_archived, "list memories")


async def _newest(
    redis: Redis, keys: Keys, expr: str, limit: int, include_archived: bool, action: str
) -> list[MemoryRecord]:
    """The newest ``limit`` memories matching ``expr`` (active ones unless ``include_archived``)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise InvalidArgument(f"limit must be an integer from 1 to 10000, got {limit!r}")
    if not include_archived:
        expr += " " + tag_clause("status", "active")
    with redis_errors(action):
        reply = await redis.execute_command(  # type: ignore[no-untyped-call]
            *newest_command(keys.index_alias, expr, limit, RECORD_FIELDS), **NEVER_DECODE
        )
        info = await recorded_index(redis, keys)
    embedding = (info.model_id, info.dims) if info else ("", 0)
    return [
        record_from_fields(row.key.removeprefix(keys.doc_prefix), row.fields, embedding)
        for row in search_rows(reply)
    ]


async def recent_drops(redis: Redis, keys: Keys, count: int = 100) -> list[dict[str, Any]]:
    """The latest writes the filters dropped (newest first): reason, detail, text, writer, time."""
    with redis_errors("read recent drops"):
        entries: Any = await redis.xrevrange(keys.recent_drops, count=count)
    return [decode_outcome(fields[b"o"]) for _, fields in entries or [] if b"o" in fields]


# -- namespaces -------------------------------------------------------------------


async def delete_namespace(redis: Redis, keys: Keys) -> int:
    """Delete a namespace for good: its indexes and every key; returns the keys deleted.

    For throwaway namespaces (the demo's, tests'); memories are not exported first.
    It leaves the registry first, so workers serving every namespace let it go.
    """
    with redis_errors("delete the namespace"):
        await redis.srem(namespace_registry(keys.prefix), keys.namespace)
        for name in await list_indexes(redis):
            if keys.is_index(name):
                await redis.execute_command("FT.DROPINDEX", name)  # type: ignore[no-untyped-call]
        found = [key async for key in redis.scan_iter(match=keys.pattern, count=1000)]
        for start in range(0, len(found), 1000):
            await redis.delete(*found[start : start + 1000])
    return len(found)
