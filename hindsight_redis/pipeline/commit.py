"""Atomic commits: each candidate's index write (or merge, or drop, or hold) and its XACK.

For each candidate a Lua script does the state change, records the outcome
(the redelivery guard that makes commits idempotent), acknowledges the entry,
bumps the counters and wakes a writer waiting with ``wait=True``; a held
candidate is stored apart (``Keys.held``, ``trust.held``), never indexed. One call
commits ``scripts.MEMORIES_PER_CALL`` candidates in order, all calls of a
batch go in one pipeline. The writes committed are then recorded in the audit
trail, one entry per writer and batch (who, identified how, which ids). A crash
before a call leaves its entries pending (they are redelivered); a crash after
it leaves nothing to redo. Either way no memory is lost or indexed twice.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline

from hindsight_redis.core.codec import EVENT_FIELD, encode_outcome, pack_for_script
from hindsight_redis.core.documents import memory_document
from hindsight_redis.core.histogram import bucket_of
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text, entry_ms
from hindsight_redis.errors import HindsightError, IndexMoved, redis_errors
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.stages.rules import content_key
from hindsight_redis.redis import scripts
from hindsight_redis.trust.audit import queue_audit
from hindsight_redis.trust.held import held_entry

log = logging.getLogger(__name__)
_CONTENT_IN_OUTCOME = 2000
_PAST = {"index": "indexed", "merge": "merged", "drop": "dropped", "hold": "held"}


class Committer:
    """Commits processed candidates and dead-letters failed entries.

    ``audit_retention_days``: how long the audit trail keeps the entries recording the
    writes committed (None: not recorded).
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        keys: Keys,
        *,
        vector_field: str,
        generation: int,
        outcome_ttl_s: int,
        vector_datatype: str,
        contextual: bool = True,
        audit_retention_days: float | None = None,
    ) -> None:
        self.redis = redis
        self.audit_retention_days = audit_retention_days
        self.contextual = contextual  # the index has a contextual field: memories wait for it
        self.keys = keys
        self.vector_field = vector_field
        self.vector_datatype = vector_datatype  # the index's: how the vector is stored
        self.generation = generation
        self.outcome_ttl_s = outcome_ttl_s

    async def commit(self, candidates: Sequence[Candidate]) -> dict[str, int]:
        """Commit every candidate in one pipeline; returns counts per outcome."""
        counts = {"indexed": 0, "merged": 0, "dropped": 0, "held": 0, "already": 0}
        if not candidates:
            return counts
        now = time.time()
        per_call = scripts.MEMORIES_PER_CALL
        with redis_errors("commit processed writes"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for first in range(0, len(candidates), per_call):
                    self._queue(pipe, candidates[first : first + per_call], now)
                replies = await scripts.execute(pipe)
        results = [result for reply in replies for result in reply]
        vanished = []
        twins = []
        committed = []
        stale = 0
        for candidate, result in zip(candidates, results, strict=True):
            if result == -2:
                stale += 1
            elif result == -3:
                twins.append(candidate)
            elif result == 0:
                counts["already"] += 1
            elif result == -1:
                vanished.append(candidate)
            else:
                counts[_PAST[_op(candidate)]] += 1
                committed.append(candidate)
        if committed and self.audit_retention_days is not None:
            await self._audit(committed, self.audit_retention_days)
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
        if twins:  # another worker indexed the same text meanwhile: merge into its memory
            await self._merge_into_holders(twins, counts)
        return counts

    async def _audit(self, committed: Sequence[Candidate], retention_days: float) -> None:
        """One audit entry per writer (and how it was identified) of the writes committed.

        The commit is done: a trail that cannot be written is logged, not retried, and the
        batch goes on.
        """
        writers: dict[tuple[str, str], list[Candidate]] = {}
        for candidate in committed:
            event = candidate.event
            writers.setdefault((event.agent_id, event.provenance), []).append(candidate)
        try:
            with redis_errors("record the writes in the audit trail"):
                async with self.redis.pipeline(transaction=False) as pipe:
                    for (agent, how), written in writers.items():
                        outcomes = Counter(_PAST[_op(c)] for c in written)
                        queue_audit(
                            pipe,
                            self.keys,
                            "write",
                            agent or "anonymous",
                            retention_days=retention_days,
                            how=how,
                            ids=[c.event.event_id for c in written],
                            **outcomes,
                        )
                    await pipe.execute()
        except HindsightError as e:
            log.warning("could not record %d writes in the audit trail: %s", len(committed), e)

    async def _merge_into_holders(self, twins: list[Candidate], counts: dict[str, int]) -> None:
        with redis_errors("find the memory holding a text"):
            holders = await self.redis.mget(
                [self.keys.content_claim(content_key(c)) for c in twins]
            )
        for candidate, holder in zip(twins, holders, strict=True):
            candidate.merge_into = as_text(holder) if holder else None
        again = await self.commit(twins)
        for outcome in ("indexed", "merged"):
            counts[outcome] += again[outcome]

    def _queue(self, pipe: Pipeline, candidates: Sequence[Candidate], now: float) -> None:
        """Queue one script call committing ``candidates`` in order."""
        keys = self.keys
        memory_keys: list[str] = []
        items: list[list[Any]] = []
        for candidate in candidates:
            event = candidate.event
            op = _op(candidate)
            target = candidate.merge_into if op == "merge" else event.event_id
            assert target is not None
            target_key = keys.held if op == "hold" else keys.doc(target)
            counters = [
                *candidate.counters,
                f"dropped:{candidate.drop_reason}" if op == "drop" else _PAST[op],
            ]
            fields: list[str | bytes] = []
            conflicts: list[str] = []
            latency = ""  # write-to-searchable seconds, for an indexed write only
            claim = keys.index_meta  # read only when indexing (a key of the same slot)
            if op == "index":
                if candidate.conflicts_with:
                    counters.append("conflicts")
                    conflicts = [keys.doc(m) for m in candidate.conflicts_with]
                claim = keys.content_claim(content_key(candidate))
                doc = doc_from_candidate(
                    candidate,
                    vector_field=self.vector_field,
                    vector_datatype=self.vector_datatype,
                    contextual=self.contextual,
                )
                doc["indexed_at"] = f"{now:.6f}"  # index lag: indexed_at - created_at
                latency = f"{searchable_after(candidate, now):.6f}"
                fields = [x for pair in doc.items() for x in pair]
            elif op == "hold":
                assert candidate.hold_reason is not None
                fields = [held_entry(event, candidate.hold_reason, at=now)]
            memory_keys += [
                keys.outcome(event.event_id),
                target_key,
                keys.notify(event.event_id),
                claim,
                *conflicts,
            ]
            items.append(
                [
                    candidate.entry_id,
                    op,
                    encode_outcome(outcome_of(candidate)),
                    event.notify,
                    event.event_id,
                    event.source,
                    fields,
                    len(conflicts),
                    counters,
                    bucket_of(float(latency)) if latency else "",
                    latency,
                ]
            )
        scripts.commit.queue(
            pipe,
            stream=keys.stream,
            stats=keys.stats,
            errors=keys.errors,
            recent_drops=keys.recent_drops,
            index_meta=keys.index_meta,
            access_log=keys.access_log,
            merge_log=keys.merge_log,
            index_latency=keys.index_latency,
            memories=memory_keys,
            group=keys.group,
            outcome_ttl_s=self.outcome_ttl_s,
            now=f"{now:.6f}",
            generation=str(self.generation),
            doc_prefix=keys.doc_prefix,
            batch=pack_for_script(items),
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
        with redis_errors("dead-letter a failed write"):
            result = await scripts.dead_letter(
                self.redis,
                stream=self.keys.stream,
                dead_letters=self.keys.dead_letters,
                stats=self.keys.stats,
                errors=self.keys.errors,
                notify_list=self.keys.notify(event_id or "none"),
                group=self.keys.group,
                entry_id=entry_id,
                payload=fields.get(EVENT_FIELD, b""),
                error=error[:2000],
                deliveries=deliveries,
                failed_at=f"{time.time():.6f}",
                notify=bool(notify and event_id),
                outcome=encode_outcome(outcome),
            )
        return bool(result)


def searchable_after(candidate: Candidate, now: float) -> float:
    """Seconds from a write's append to the stream (its entry id's time; the event's
    ``created_at`` when the id tells none) to ``now``, when its commit makes it searchable.

    The append, not ``created_at``: a held write approved later, or a dead letter replayed,
    is timed from its last append, the time the pipeline had it."""
    try:
        written = entry_ms(candidate.entry_id) / 1000
    except ValueError:
        written = 0.0
    return max(now - (written or candidate.event.created_at), 0.0)


def _op(candidate: Candidate) -> str:
    if candidate.held:
        return "hold"
    if candidate.dropped:
        return "drop"
    if candidate.merge_into is not None:
        return "merge"
    return "index"


# Who decided, as the stages noted it: ``llm``, or the offline stand-in and why
# (``heuristic (budget)``: the namespace's daily LLM budget was spent).
_DECIDERS = ("scored_by", "summarized_by", "judged_by", "poisoning_by")


def _deciders(candidate: Candidate) -> dict[str, str]:
    return {k: candidate.notes[k] for k in _DECIDERS if k in candidate.notes}


def outcome_of(candidate: Candidate) -> dict[str, Any]:
    """What is recorded about a candidate's fate (and sent to a waiting writer)."""
    event = candidate.event
    op = _op(candidate)
    if op == "hold":  # the write itself waits in Keys.held: the outcome says only why
        return {"status": "held", "reason": candidate.hold_reason, "id": event.event_id}
    if op == "drop":
        return {
            "status": "dropped",
            "id": event.event_id,
            "reason": candidate.drop_reason,
            "detail": candidate.drop_detail,
            "content": event.content[:_CONTENT_IN_OUTCOME],
            "tags": list(event.tags),
            "agent_id": event.agent_id,
            "visibility": event.visibility,
            "session_id": event.session_id,
            "source": event.source,
            "created_at": event.created_at,
            **_deciders(candidate),
        }
    if op == "merge":
        return {
            "status": "merged",
            "merged_into": candidate.merge_into,
            "content": event.content[:_CONTENT_IN_OUTCOME],
            "tags": list(event.tags),
            "agent_id": event.agent_id,
            "visibility": event.visibility,
            "session_id": event.session_id,
            "source": event.source,
            "created_at": event.created_at,
            **_deciders(candidate),
        }
    outcome: dict[str, Any] = {"status": "indexed", "id": event.event_id, **_deciders(candidate)}
    if candidate.conflicts_with:
        outcome["conflicts_with"] = list(candidate.conflicts_with)
    return outcome


def doc_from_candidate(
    candidate: Candidate,
    *,
    vector_field: str,
    vector_datatype: str,
    contextual: bool = True,
) -> dict[str, str | bytes]:
    """The memory hash of a candidate about to be indexed (``documents.memory_document``).

    The memory's id is the candidate's ``event.event_id``.
    """
    return memory_document(
        candidate.event,
        content=candidate.content,
        vector_field=vector_field,
        vector_datatype=vector_datatype,
        embedding=candidate.embedding,
        original=candidate.original,
        write_score=candidate.write_score,
        score_reason=candidate.score_reason,
        conflicts_with=candidate.conflicts_with,
        contextual=contextual,
    )
