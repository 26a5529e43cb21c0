"""Reading one memory by id, as a given agent sees it.

A memory is its hash while it is stored; a write held for review is its entry
in ``Keys.held`` (``trust.held``); a write that was merged or dropped is its
outcome. For a viewer (an agent identity), another agent's private memory
reads as absent: nothing about it, not even that it exists; so does a held or
rejected write, which only operators see (a caller with no identity).
"""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis.core.codec import decode_outcome
from hindsight_redis.core.documents import (
    RECORD_FIELDS,
    record_from_fields,
    record_from_outcome,
    with_merged_sources,
)
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryRecord
from hindsight_redis.errors import redis_errors
from hindsight_redis.index.filters import readable_by
from hindsight_redis.index.record import info_from_reply
from hindsight_redis.trust.held import read_held_entry


async def read_record(
    redis: Redis, keys: Keys, memory_id: str, viewer: str | None
) -> MemoryRecord | None:
    """The memory or outcome with this id, or None; ``viewer`` None sees everything."""
    with redis_errors("read the memory"):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hmget(keys.doc(memory_id), list(RECORD_FIELDS))
            pipe.hget(keys.merge_log, memory_id)  # sources merged in, not folded yet
            pipe.hgetall(keys.index_meta)  # its model: the hash does not name it
            pipe.hget(keys.held, memory_id)  # held for review: operators only
            values, merged, meta, held = await pipe.execute()
        if any(v is not None for v in values):
            fields = dict(zip(RECORD_FIELDS, values, strict=True))
            if merged is not None:
                fields["sources"] = with_merged_sources(fields.get("sources"), merged)
            if viewer is not None and not readable_by(fields, viewer):
                return None
            info = info_from_reply(keys, meta)
            return record_from_fields(
                memory_id, fields, (info.model_id, info.dims) if info else ("", 0)
            )
        if held is not None:
            return None if viewer is not None else read_held_entry(held).record()
        raw = await redis.get(keys.outcome(memory_id))
    if raw is None:
        return None
    outcome = decode_outcome(raw)
    if viewer is not None and not readable_by(outcome, viewer):
        return None
    return record_from_outcome(memory_id, keys.namespace, outcome)
