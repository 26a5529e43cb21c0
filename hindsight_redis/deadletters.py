"""The dead-letter stream: entries that failed ``max_deliveries`` times or could not be decoded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis import scripts
from hindsight_redis.codec import as_text, decode_event
from hindsight_redis.errors import PoisonMessage
from hindsight_redis.keys import Keys


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


async def list_dead_letters(
    redis: aioredis.Redis, keys: Keys, count: int = 100
) -> list[DeadLetter]:
    """The oldest ``count`` dead letters."""
    entries: Any = await redis.xrange(keys.dead_letters, count=count)
    return [_dead_letter(as_text(i), f) for i, f in entries or []]


async def replay_dead_letters(
    redis: aioredis.Redis, keys: Keys, ids: list[str] | None = None
) -> list[str]:
    """Put dead letters back on the stream (all when ``ids`` is None); their new stream ids."""
    if ids is None:
        entries: Any = await redis.xrange(keys.dead_letters)
        ids = [as_text(i) for i, _ in entries or []]
    script = redis.register_script(scripts.REPLAY)
    replayed = []
    for dlq_id in ids:
        new_id = await script(keys=[keys.stream, keys.dead_letters, keys.stats], args=[dlq_id])
        if new_id:
            replayed.append(as_text(new_id))
    return replayed
