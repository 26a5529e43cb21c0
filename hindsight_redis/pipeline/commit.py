"""Atomic commits: each candidate's index write (or merge, or drop) and its XACK.

One Lua script per candidate does the state change, records the outcome
(the redelivery guard that makes commits idempotent), acknowledges the entry,
bumps the counters and wakes a writer waiting with ``wait=True``. A crash
before the script leaves the entry pending (it is redelivered); a crash after
it leaves nothing to redo. Either way no memory is lost or indexed twice.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack
import redis.asyncio as aioredis

from hindsight_redis import scripts
from hindsight_redis.codec import doc_from_candidate, encode_outcome
from hindsight_redis.errors import IndexMoved
from hindsight_redis.keys import Keys
from hindsight_redis.pipeline.base import Candidate

_CONTENT_IN_OUTCOME = 2000
_PAST = {"index": "indexed", "merge": "merged", "drop": "dropped"}


class Committer:
    """Commits processed candidates and dead-letters failed entries."""

    def __init__(
        self,
        redis: aioredis.Redis,
        keys: Keys,
        *,
        vector_field: str,
        embedding_model: str,
        generation: int,
        outcome_ttl_s: int,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.vector_field = vector_field
        self.embedding_model = embedding_model
        self.generation = generation
        self.outcome_ttl_s = outcome_ttl_s
        self._commit = redis.register_script(scripts.COMMIT)
        self._dead_letter = redis.register_script(scripts.DEAD_LETTER)

    async def commit(self, candidates: Sequence[Candidate]) -> dict[str, int]:
        """Commit every candidate in one pipeline; returns counts per outcome."""
        counts = {"indexed": 0, "merged": 0, "dropped": 0, "already": 0}
        if not candidates:
            return counts
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)
        for candidate in candidates:
            await self._queue(pipe, candidate, now)
        results = await pipe.execute()
        vanished = []
        stale = 0
        for candidate, result in zip(candidates, results, strict=True):
            if result == -2:
                stale += 1
            elif result == 0:
                counts["already"] += 1
            elif result == -1:
                vanished.append(candidate)
            else:
                counts[_PAST[_op(candidate)]] += 1
        if stale:
            raise IndexMoved(
                f"{stale} memories were embedded for index generation {self.generation}, "
                "but the index was rebuilt (reindex); they stay pending for a worker "
                "with the new embedder"
            )
        if vanished:  # the memory a duplicate was merged into is gone: store the new one
            for candidate in vanished:
                candidate.merge_into = None
            again = await self.commit(vanished)
            counts["indexed"] += again["indexed"]
        return counts

    async def _queue(self, pipe: Any, candidate: Candidate, now: float) -> None:
        event = candidate.event
        op = _op(candidate)
        keys = self.keys
        target = candidate.merge_into if op == "merge" else event.event_id
        assert target is not None
        counters = list(candidate.counters)
        counters.append(f"dropped:{candidate.drop_reason}" if op == "drop" else _PAST[op])
        if op == "index" and candidate.conflicts_with:
            counters.append("conflicts")
        fields: list[bytes] = []
        if op == "index":
            doc = doc_from_candidate(
                candidate,
                memory_id=event.event_id,
                vector_field=self.vector_field,
                embedding_model=self.embedding_model,
                now=now,
            )
            if candidate.conflicts_with:
                doc["review"] = "conflict"
            flat = [x for pair in doc.items() for x in pair]
            fields = [msgpack.packb(flat, use_bin_type=False)]
        conflict_keys = [keys.doc(m) for m in candidate.conflicts_with] if op == "index" else []
        await self._commit(
            keys=[
                keys.outcome(event.event_id),
                keys.stream,
                keys.stats,
                keys.doc(target),
                keys.notify(event.event_id),
                keys.errors,
                keys.recent_drops,
                keys.index_meta,
                *conflict_keys,
            ],
            args=[
                keys.group,
                candidate.entry_id,
                op,
                encode_outcome(outcome_of(candidate)),
                self.outcome_ttl_s,
                "1" if event.notify else "0",
                f"{now:.6f}",
                event.event_id,
                event.source,
                len(counters),
                *counters,
                *fields,
                str(self.generation),
            ],
            client=pipe,
        )

    async def dead_letter(
        self,
        entry_id: str,
        fields: Mapping[bytes, bytes],
        error: str,
        deliveries: int,
        *,
        event_id: str | None = None,
        notify: bool = False,
    ) -> bool:
        """Move a stream entry to the dead-letter stream with its error; False if already gone."""
        outcome = {"status": "dead_letter", "reason": error}
        notify_key = self.keys.notify(event_id) if event_id else self.keys.notify("none")
        result = await self._dead_letter(
            keys=[
                self.keys.stream,
                self.keys.dead_letters,
                self.keys.stats,
                self.keys.errors,
                notify_key,
            ],
            args=[
                self.keys.group,
                entry_id,
                fields.get(b"e", b""),
                error[:2000],
                deliveries,
                f"{time.time():.6f}",
                "1" if notify and event_id else "0",
                encode_outcome(outcome),
            ],
        )
        return bool(result)


def _op(candidate: Candidate) -> str:
    if candidate.dropped:
        return "drop"
    if candidate.merge_into is not None:
        return "merge"
    return "index"


def outcome_of(candidate: Candidate) -> dict[str, Any]:
    """What is recorded about a candidate's fate (and sent to a waiting writer)."""
    event = candidate.event
    op = _op(candidate)
    if op == "drop":
        return {
            "status": "dropped",
            "reason": candidate.drop_reason,
            "detail": candidate.drop_detail,
            "content": event.content[:_CONTENT_IN_OUTCOME],
            "agent_id": event.agent_id,
            "source": event.source,
        }
    if op == "merge":
        return {
            "status": "merged",
            "merged_into": candidate.merge_into,
            "content": event.content[:_CONTENT_IN_OUTCOME],
        }
    outcome: dict[str, Any] = {"status": "indexed", "id": event.event_id}
    if candidate.conflicts_with:
        outcome["conflicts_with"] = list(candidate.conflicts_with)
    return outcome
