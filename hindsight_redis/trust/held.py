"""Writes held for review: how one is stored, listed, approved and rejected.

A held write is never indexed. It lives in the namespace's hash ``Keys.held``:
memory id -> a msgpack map ``{"event": <core.codec.encode_event bytes>, "reason":
str, "state": "held"|"rejected", "at": float, "by": str}`` (``by``: who rejected
it, "" while held); its outcome (``Keys.outcome``) says ``held`` or ``rejected``
with the reason, so ``get()`` and waiting writers can tell. The worker's commit
writes the entry (``held_entry``); a person then approves it (``approve_held``:
the event goes back on the stream as ``reviewed``, passes the checks that held
it and is filtered, embedded, deduplicated and indexed as any write) or rejects
it (``reject_held``: kept for the record, never searchable). Both are atomic
against a concurrent decision, and both are recorded in the audit trail.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
from redis.asyncio import Redis

from hindsight_redis.core.codec import EVENT_FIELD, decode_event, encode_event, encode_outcome
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent, MemoryRecord
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import InvalidArgument, NotFound, PoisonMessage, redis_errors
from hindsight_redis.redis import scripts
from hindsight_redis.trust.audit import record_audit

HeldState = Literal["held", "rejected"]
_SCAN_COUNT = 500


@dataclass(frozen=True, slots=True)
class HeldWrite:
    """One write held for review: the event as written, why it was held, its state, when
    (``at``, unix seconds: held, or rejected) and who rejected it (``by``)."""

    event: MemoryEvent
    reason: str
    state: HeldState = "held"
    at: float = 0.0
    by: str = ""

    @property
    def memory_id(self) -> str:
        """The id the memory has (and keeps once approved)."""
        return self.event.event_id

    def record(self) -> MemoryRecord:
        """The write as ``get()`` shows it: status ``held`` or ``rejected``, with the reason."""
        event = self.event
        return MemoryRecord(
            id=event.event_id,
            namespace=event.namespace,
            content=event.content,
            status=self.state,
            agent_id=event.agent_id,
            session_id=event.session_id,
            task_type=event.task_type,
            source=event.source,
            sources=(event.source,) if event.source else (),
            tags=event.tags,
            created_at=event.created_at,
            last_accessed_at=event.created_at,
            protected=event.protected,
            visibility=event.visibility,
            half_life_days=event.half_life_days,
            occurred_at=event.occurred_at,
            context=event.context,
            reason=f"rejected by {self.by}" if self.state == "rejected" else None,
            hold_reason=self.reason,
            provenance=event.provenance,
        )


def held_entry(
    event: MemoryEvent, reason: str, *, at: float, state: HeldState = "held", by: str = ""
) -> bytes:
    """The value ``Keys.held`` stores for a held write (pure)."""
    packed: bytes = msgpack.packb(
        {"event": encode_event(event), "reason": reason, "state": state, "at": at, "by": by},
        use_bin_type=True,
    )
    return packed


def read_held_entry(raw: bytes | str) -> HeldWrite:
    """The ``HeldWrite`` of a ``Keys.held`` value; ``PoisonMessage`` when it cannot be read."""
    if not isinstance(raw, bytes):  # msgpack survives only undecoded replies
        raise PoisonMessage("held write was read as text: the connection decodes replies")
    try:
        data: Any = msgpack.unpackb(raw, raw=False)
    except (ValueError, msgpack.UnpackException) as e:
        raise PoisonMessage(f"held write is not valid msgpack: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("event"), bytes):
        raise PoisonMessage("held write is not a map with an event")
    state = data.get("state")
    return HeldWrite(
        event=decode_event({EVENT_FIELD: data["event"]}),
        reason=str(data.get("reason", "")),
        state="rejected" if state == "rejected" else "held",
        at=float(data.get("at") or 0.0),
        by=str(data.get("by", "")),
    )


async def read_held(redis: Redis, keys: Keys, memory_id: str) -> HeldWrite | None:
    """The held (or rejected) write with this id, or None."""
    with redis_errors("read the held write"):
        raw = await redis.hget(keys.held, memory_id)
    return None if raw is None else read_held_entry(raw)


async def list_held(
    redis: Redis, keys: Keys, *, state: HeldState | Literal["all"] = "held", limit: int = 100
) -> list[HeldWrite]:
    """The writes in ``state`` (``held``, ``rejected`` or ``all``), newest first; at most
    ``limit``. Read in ``HSCAN`` pages (the hash may be large), so never one long command."""
    if state not in ("held", "rejected", "all"):
        raise InvalidArgument(f"state must be held, rejected or all, not {state!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgument("limit must be a positive integer")
    found: list[HeldWrite] = []
    with redis_errors("list the held writes"):
        async for _, raw in redis.hscan_iter(keys.held, count=_SCAN_COUNT):
            try:
                held = read_held_entry(raw)
            except PoisonMessage:
                continue  # a value nobody can read: not a write anyone could approve
            if state == "all" or held.state == state:
                found.append(held)
    found.sort(key=lambda h: (-h.at, h.memory_id))
    return found[:limit]


async def approve_held(
    redis: Redis,
    keys: Keys,
    memory_id: str,
    *,
    by: str,
    how: str,
    retention_days: float,
    notify: bool = False,
) -> tuple[HeldWrite, str]:
    """Release a held write: back on the stream as ``reviewed``, it is then processed as
    any write (and its memory marked ``reviewed``); the write and its new stream id.
    ``notify``: its outcome is pushed to a waiting caller. ``NotFound`` when there is no
    such write, ``InvalidArgument`` when it was rejected."""
    raw, held = await _current(redis, keys, memory_id)
    if held.state != "held":
        raise InvalidArgument(f"write {memory_id!r} was rejected by {held.by or 'operator'}")
    event = dataclasses.replace(held.event, hold=None, reviewed=True, notify=notify)
    with redis_errors("approve the held write"):
        stream_id = await scripts.release_held(
            redis,
            held=keys.held,
            outcome=keys.outcome(memory_id),
            stream=keys.stream,
            stats=keys.stats,
            memory_id=memory_id,
            expected=raw,
            payload=encode_event(event),
        )
    if not stream_id:
        raise InvalidArgument(f"write {memory_id!r} was decided meanwhile: list it again")
    await record_audit(
        redis,
        keys,
        "approve",
        by,
        retention_days=retention_days,
        how=how,
        ids=[memory_id],
        reason=_code(held.reason),
        stream_id=as_text(stream_id),
    )
    return held, as_text(stream_id)


async def reject_held(
    redis: Redis,
    keys: Keys,
    memory_id: str,
    *,
    by: str,
    how: str,
    retention_days: float,
    outcome_ttl_s: int,
) -> HeldWrite:
    """Reject a held write: kept for the record (state ``rejected``), never searchable.
    ``NotFound`` when there is no such write; rejecting it again changes nothing."""
    raw, held = await _current(redis, keys, memory_id)
    if held.state == "rejected":
        return held
    rejected = dataclasses.replace(held, state="rejected", at=time.time(), by=by or "operator")
    outcome = {"status": "rejected", "reason": held.reason, "id": memory_id}
    with redis_errors("reject the held write"):
        done = await scripts.reject_held(
            redis,
            held=keys.held,
            outcome=keys.outcome(memory_id),
            stats=keys.stats,
            memory_id=memory_id,
            expected=raw,
            entry=held_entry(
                held.event, held.reason, at=rejected.at, state="rejected", by=rejected.by
            ),
            outcome_json=encode_outcome(outcome),
            outcome_ttl_s=outcome_ttl_s,
        )
    if not done:
        raise InvalidArgument(f"write {memory_id!r} was decided meanwhile: list it again")
    await record_audit(
        redis,
        keys,
        "reject",
        by,
        retention_days=retention_days,
        how=how,
        ids=[memory_id],
        reason=_code(held.reason),
    )
    return rejected


async def _current(redis: Redis, keys: Keys, memory_id: str) -> tuple[bytes, HeldWrite]:
    with redis_errors("read the held write"):
        raw = await redis.hget(keys.held, memory_id)
    if raw is None:
        raise NotFound(f"no held write {memory_id!r} in namespace {keys.namespace!r}")
    held = read_held_entry(raw)
    assert isinstance(raw, bytes)  # read_held_entry refuses text
    return raw, held


def _code(reason: str) -> str:
    """The reason's code (``poisoning:override``), without the words that showed it: the
    audit trail holds no content."""
    return reason.split(" ", 1)[0][:100]
