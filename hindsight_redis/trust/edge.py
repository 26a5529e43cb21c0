"""The write edge's verdict on secrets: what a write may put on the stream.

``AsyncMemoryClient`` screens every write before validating it (``screen``), under
the ``secrets`` setting (``TrustSettings``): ``mask`` (the default) replaces each
secret by its placeholder, so the stream entry, and everything made from it, never
holds it; ``drop`` stores nothing of the write but its outcome (``dropped``, reason
``secret``, the content masked: ``record_edge_drops``), so ``get()`` and the
counters tell the same as for a worker's drop; ``hold`` appends the write as written
with ``MemoryEvent.hold`` set (``secret:<kinds>``), for the workers to hold it for
review; ``keep`` stores it as written. The MCP and HTTP servers write through the
client, so the same holds for their tools.

Why the client and not a worker: the stream entry is the first copy of a write, and
every worker, replica and AOF file gets it at once; rewriting it afterwards would
leave the secret in the AOF and on replicas. A worker still masks what a writer that
bypassed the client put on the stream (``pipeline.stages.secrets``), before anything
else reads it; that entry itself stays in the stream until trimmed.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any, Literal

from redis.asyncio import Redis

from hindsight_redis.core.codec import encode_outcome
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent, WriteReceipt
from hindsight_redis.errors import redis_errors
from hindsight_redis.redis import scripts
from hindsight_redis.trust.secrets import might_hold_secrets, screen_fields, secret_reason

SecretPolicy = Literal["mask", "drop", "hold", "keep"]
SECRET_REASON = "secret"
"""The drop reason of a write dropped for holding a secret (``dropped:secret``)."""
SCREENED_FIELDS = ("content", "context", "source", "tags")
"""The fields of a write that are scanned for secrets."""
_CONTENT_IN_OUTCOME = 2000


@dataclass(frozen=True, slots=True)
class Screened:
    """A write that holds secrets, once screened: the ``fields`` to validate and append,
    the ``masked`` fields (what another write's context may quote), the ``kinds`` found,
    the ``hold`` verdict (``MemoryEvent.hold``) and whether it is ``dropped``."""

    fields: Mapping[str, Any]
    masked: Mapping[str, Any]
    kinds: tuple[str, ...]
    hold: str | None = None
    dropped: bool = False

    def restored(self, filled: Mapping[str, Any]) -> Mapping[str, Any]:
        """``filled`` (the masked fields, maybe given a context since) with this write's
        own screened fields as written: a held write is reviewed as it was written."""
        if self.hold is None:
            return filled
        own = {name: self.fields[name] for name in SCREENED_FIELDS if name in self.fields}
        return {**filled, **own}


def screen(fields: Mapping[str, Any], policy: SecretPolicy) -> Screened | None:
    """A write's fields under ``policy``: None when they hold no secret (or ``keep``)."""
    if policy == "keep":
        return None
    found = screen_fields(fields)
    if found is None:
        return None
    masked, kinds = found
    if policy == "hold":
        return Screened(fields, masked, kinds, hold=secret_reason(kinds))
    return Screened(masked, masked, kinds, dropped=policy == "drop")


def screen_many(items: Sequence[Any], policy: SecretPolicy) -> dict[int, Screened]:
    """The items of a batch (a write's fields each) that hold secrets, by position, under
    ``policy``. The contents are looked at together first (``might_hold_secrets``): a
    batch pays for its few suspects, not for every item."""
    if policy == "keep":
        return {}
    try:
        suspects = set(might_hold_secrets([item.get("content") for item in items]))
        # The other fields, of the items that have more than a content.
        more = compress(range(len(items)), map(operator.gt, map(len, items), repeat(1)))
        suspects.update(n for n in more if _others(items[n]))
    except (AttributeError, TypeError):  # not all dicts of text: validation says which
        suspects = {n for n, item in enumerate(items) if isinstance(item, Mapping)}
    found = {}
    for n in sorted(suspects):
        verdict = screen(items[n], policy)
        if verdict is not None:
            found[n] = verdict
    return found


def _others(item: Mapping[str, Any]) -> bool:
    """Whether a write carries a context, a source or tags (looked at one by one)."""
    return bool(item.get("context") or item.get("source") or item.get("tags"))


def dropped_outcome(event: MemoryEvent, kinds: Sequence[str]) -> dict[str, Any]:
    """The outcome of a write dropped at the edge, as a worker's drop records one (the
    event's fields are already masked)."""
    return {
        "status": "dropped",
        "reason": SECRET_REASON,
        "detail": ", ".join(kinds),
        "content": event.content[:_CONTENT_IN_OUTCOME],
        "agent_id": event.agent_id,
        "visibility": event.visibility,
        "session_id": event.session_id,
        "source": event.source,
        "created_at": event.created_at,
    }


async def record_edge_drops(
    redis: Redis,
    keys: Keys,
    drops: Sequence[tuple[MemoryEvent, tuple[str, ...], bool]],
    *,
    outcome_ttl_s: int,
    idempotency_ttl_s: int,
) -> list[WriteReceipt]:
    """Record writes dropped at the edge (``(event, kinds, keyed)``, the events masked):
    their outcomes, the ``dropped:secret`` counter, the recent drops; one round trip.

    A keyed write whose key an earlier write used gets that write's receipt back
    (``duplicate``), as an append would.
    """
    writes: list[str] = []
    outcomes: list[str] = []
    for event, kinds, keyed in drops:
        writes += [keys.outcome(event.event_id), keys.idempotency(event.event_id)]
        outcomes += [encode_outcome(dropped_outcome(event, kinds)), "1" if keyed else "0"]
    with redis_errors("record a write dropped for a secret"):
        replies = await scripts.drop_at_edge(
            redis,
            stats=keys.stats,
            recent_drops=keys.recent_drops,
            writes=writes,
            outcome_ttl_s=outcome_ttl_s,
            idempotency_ttl_s=idempotency_ttl_s,
            outcomes=outcomes,
        )
    receipts = []
    for (event, _, _), raw in zip(drops, replies, strict=True):
        reply = raw.decode() if isinstance(raw, bytes) else str(raw)
        if reply.startswith("d:") and reply[2:]:  # an earlier write, appended: its receipt
            receipts.append(WriteReceipt(id=event.event_id, stream_id=reply[2:], duplicate=True))
            continue
        receipts.append(
            WriteReceipt(
                id=event.event_id,
                status="dropped",
                reason=SECRET_REASON,
                duplicate=reply.startswith("d:"),
            )
        )
    return receipts
