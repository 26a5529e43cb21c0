"""A namespace's counters and stream state, read for many namespaces at once.

``read_queue_states`` is what ``admin.collect_stats`` (one namespace) and the
Prometheus collector (every registered namespace) both read: two pipelined
round trips per 250 namespaces, whatever their number. Every reply goes
through the error boundary (``errors.map_redis_error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.fields import REFINE_CHINESE
from hindsight_redis.core.histogram import Histogram
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text, entries_added, entry_ms
from hindsight_redis.errors import (
    redis_errors,
)
from hindsight_redis.index.counts import (
    count_command,
    memory_count_queries,
    refine_backlog,
    refine_backlog_command,
    search_count,
)
from hindsight_redis.index.filters import refine_pending_filter, tag_clause
from hindsight_redis.providers.spend import SpendBudget, read_spend

# Namespaces per pipeline: 12 commands each in the first round trip.
_NAMESPACES_PER_PIPELINE = 250


@dataclass(frozen=True, slots=True)
class QueueState:
    """What one namespace holds and how far behind its workers are, as one read saw it."""

    namespace: str
    counters: dict[str, int]
    """The stats hash (``processed``, ``indexed``, ``dropped:<reason>``...) plus ``accepted``."""
    stream_length: int
    dead_letters: int
    pending: int
    """Entries delivered to a worker and not acknowledged."""
    undelivered: int
    consumers: dict[str, int]
    """Pending entries per consumer."""
    oldest_ms: int | None
    """Time of the oldest unprocessed entry (pending or undelivered); None when there is none."""
    refine_pending: int | None
    """Memories waiting for their contextual vector; None without an index."""
    memories: dict[str, int] | None
    """``active``, ``archived``, ``protected`` (of the active) memories; None without an index."""
    refine_oldest_s: float | None = None
    """When the oldest memory waiting for its contextual vector was written (unix seconds);
    None when none waits."""
    refine_drafts: int | None = None
    """Memories with a draft contextual vector, waiting for the exact one."""
    refine_chinese: int | None = None
    """Chinese memories waiting for their multilingual vector (re-ranks Chinese searches)."""
    conflicts_open: int | None = None
    """Active memories flagged as contradicting another, not resolved yet; None without an
    index."""
    index_latency: Histogram = field(default_factory=lambda: Histogram.of({}))
    """Write-to-searchable seconds of the writes indexed (``core.histogram``)."""

    @property
    def accepted(self) -> int:
        """Writes ever appended to the stream (trimming does not lower it)."""
        return self.counters.get("accepted", 0)

    @property
    def backlog(self) -> int:
        """Accepted writes not yet processed (indexed, merged, dropped or dead-lettered)."""
        return max(self.accepted - self.counters.get("processed", 0), 0)

    @property
    def held_waiting(self) -> int:
        """Writes held for review that nobody approved or rejected yet (from the counters,
        which the hold and the review's scripts keep)."""
        c = self.counters
        return max(c.get("held", 0) - c.get("approved", 0) - c.get("rejected", 0), 0)

    @property
    def dropped(self) -> dict[str, int]:
        """Writes the filters dropped, per reason."""
        return {
            k.removeprefix("dropped:"): v
            for k, v in self.counters.items()
            if k.startswith("dropped:")
        }

    def lag_s(self, now: float) -> float:
        """Age at ``now`` (unix seconds) of the oldest unprocessed entry; 0 when there is none."""
        return 0.0 if self.oldest_ms is None else max(now - self.oldest_ms / 1000, 0.0)

    def refine_lag_s(self, now: float) -> float:
        """Age at ``now`` of the oldest memory waiting for its contextual vector; 0: none."""
        return 0.0 if self.refine_oldest_s is None else max(now - self.refine_oldest_s, 0.0)


async def read_queue_states(redis: Redis, namespaces: Sequence[Keys]) -> list[QueueState]:
    """The ``QueueState`` of each namespace, in order."""
    states: list[QueueState] = []
    for start in range(0, len(namespaces), _NAMESPACES_PER_PIPELINE):
        with redis_errors("read the stats"):
            states.extend(await _read(redis, namespaces[start : start + _NAMESPACES_PER_PIPELINE]))
    return states


@dataclass(frozen=True, slots=True)
class _Seen:
    """The first round trip's replies for one namespace, checked."""

    counters: dict[str, int]
    dead_letters: int
    stream: dict[str, Any] | None  # XINFO STREAM; None: no stream yet
    group: dict[str, Any] | None  # the workers' group; None: none yet
    refine_pending: int | None
    refine_oldest_s: float | None
    refine_drafts: int | None
    refine_chinese: int | None
    memories: dict[str, int] | None
    conflicts_open: int | None
    index_latency: Histogram

    @property
    def pending(self) -> int:
        return 0 if self.group is None else int(self.group["pending"])

    @property
    def undelivered(self) -> int:
        if self.group is None:
            return 0 if self.stream is None else int(self.stream["length"])
        return int(self.group.get("lag") or 0)


async def _read(redis: Redis, namespaces: Sequence[Keys]) -> list[QueueState]:
    pipe = redis.pipeline(transaction=False)
    for keys in namespaces:
        pipe.hgetall(keys.stats)
        pipe.xlen(keys.dead_letters)
        pipe.xinfo_stream(keys.stream)
        pipe.xinfo_groups(keys.stream)
        pipe.execute_command(*refine_backlog_command(keys))
        pipe.execute_command(*count_command(keys, refine_pending_filter(keys.namespace, "draft")))
        pipe.execute_command(
            *count_command(keys, refine_pending_filter(keys.namespace, REFINE_CHINESE))
        )
        pipe.hgetall(keys.index_latency)
        pipe.execute_command(*count_command(keys, open_conflicts_query(keys)))
        for query in memory_count_queries(keys).values():
            pipe.execute_command(*count_command(keys, query))
    replies = await pipe.execute(raise_on_error=False)
    per = len(replies) // len(namespaces) if namespaces else 0
    seen = [_seen(keys, replies[i * per : (i + 1) * per]) for i, keys in enumerate(namespaces)]
    # Second trip, only where entries are in flight: the oldest pending entry
    # (and the count per consumer), and the first entry not delivered yet.
    pipe = redis.pipeline(transaction=False)
    asked: list[tuple[int, str]] = []
    for i, (keys, first) in enumerate(zip(namespaces, seen, strict=True)):
        if first.pending:
            pipe.xpending(keys.stream, keys.group)
            asked.append((i, "pending"))
        if first.group is not None and first.undelivered:
            after = as_text(first.group["last-delivered-id"])
            pipe.xrange(keys.stream, min=f"({after}", count=1)
            asked.append((i, "next"))
    found: dict[tuple[int, str], Any] = {}
    if asked:
        for ask, reply in zip(asked, await pipe.execute(raise_on_error=False), strict=True):
            found[ask] = _checked(reply)
    return [
        _state(keys, first, found.get((i, "pending")), found.get((i, "next")))
        for i, (keys, first) in enumerate(zip(namespaces, seen, strict=True))
    ]


def _seen(keys: Keys, replies: Sequence[Any]) -> _Seen:
    counters_raw, dead_letters, stream_info, groups, refining, drafts, chinese, *rest = replies
    latency, conflicts, *counts = rest
    counters = {as_text(k): int(v) for k, v in _checked(counters_raw).items()}
    stream = _unless_missing(stream_info)
    counters["accepted"] = 0 if stream is None else entries_added(stream)
    totals = [search_count(reply) for reply in counts]
    memories = dict(zip(memory_count_queries(keys), totals, strict=True))
    refine_pending, refine_oldest = refine_backlog(refining)
    return _Seen(
        counters=counters,
        dead_letters=int(_checked(dead_letters)),
        stream=stream,
        group=next(
            (g for g in _unless_missing(groups) or [] if as_text(g["name"]) == keys.group),
            None,
        ),
        refine_pending=refine_pending,
        refine_oldest_s=refine_oldest,
        refine_drafts=search_count(drafts),
        refine_chinese=search_count(chinese),
        memories=None if None in totals else {k: v for k, v in memories.items() if v is not None},
        conflicts_open=search_count(conflicts),
        index_latency=Histogram.of({as_text(k): as_text(v) for k, v in _checked(latency).items()}),
    )


def _state(keys: Keys, seen: _Seen, pending: Any, nxt: Any) -> QueueState:
    consumers: dict[str, int] = {}
    oldest: int | None = None
    if seen.group is None:
        first = (seen.stream or {}).get("first-entry")  # nothing delivered yet
        oldest = entry_ms(as_text(first[0])) if first else None
    elif pending:
        consumers = {as_text(c["name"]): int(c["pending"]) for c in pending["consumers"] or []}
        if pending["min"] is not None:  # entries may be acked between the two trips
            oldest = entry_ms(as_text(pending["min"]))
    if oldest is None and nxt:
        oldest = entry_ms(as_text(nxt[0][0]))
    return QueueState(
        namespace=keys.namespace,
        counters=seen.counters,
        stream_length=0 if seen.stream is None else int(seen.stream["length"]),
        dead_letters=seen.dead_letters,
        pending=seen.pending,
        undelivered=seen.undelivered,
        consumers=consumers,
        oldest_ms=oldest,
        refine_pending=seen.refine_pending,
        memories=seen.memories,
        refine_oldest_s=seen.refine_oldest_s,
        refine_drafts=seen.refine_drafts,
        refine_chinese=seen.refine_chinese,
        conflicts_open=seen.conflicts_open,
        index_latency=seen.index_latency,
    )


def open_conflicts_query(keys: Keys) -> str:
    """The ``FT.SEARCH`` query of the active memories flagged for a conflict review."""
    return " ".join(
        (
            tag_clause("namespace", keys.namespace),
            tag_clause("status", "active"),
            tag_clause("review", "conflict"),
        )
    )


async def read_llm_spend(
    redis: Redis, keys: Keys, budget: SpendBudget | None = None
) -> dict[str, Any]:
    """The namespace's LLM spend today (UTC: tokens, dollars, calls, per stage, calls the
    budget saved), with ``budget`` and whether it is reached; ``total``: all time."""
    (spend,) = await read_spend(redis, [keys])
    return {**spend.today.as_dict(budget), "total": spend.total.as_dict()}


def _checked(reply: Any) -> Any:
    """``reply``, or its error raised (for ``redis_errors`` to map)."""
    if isinstance(reply, Exception):
        raise reply
    return reply


def _unless_missing(reply: Any) -> Any:
    """``reply``; None when it is the error of a missing stream."""
    if isinstance(reply, Exception) and "no such key" in str(reply).lower():
        return None
    return _checked(reply)
