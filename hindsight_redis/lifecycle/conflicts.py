"""Conflict review, the I/O: resolve flagged pairs, undo a resolution, read the log.

Each pair changes in one script (``scripts.resolve_pair`` / ``undo_pair``)
that also appends to the namespace's resolutions log (``Keys.resolutions``),
so every decision says who took it, when and why. The client checks who may
see which memory; this module only acts on the ids it is given.
"""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryRecord
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import InvalidArgument, redis_errors
from hindsight_redis.lifecycle.review import (
    KEEP_CHOICES,
    MAX_NOTE_CHARS,
    ConflictResolution,
    Keep,
    resolution_from_fields,
)
from hindsight_redis.redis import scripts


def check_resolution(keep: object, note: object) -> tuple[Keep, str]:
    """``keep`` and ``note`` checked: ``InvalidArgument`` names what is wrong."""
    if keep not in KEEP_CHOICES:
        raise InvalidArgument(f"keep must be one of new, old, both; got {keep!r}")
    if note is None:
        note = ""
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise InvalidArgument(f"note must be a string of at most {MAX_NOTE_CHARS} characters")
    problem = text_problem(note)
    if problem is not None:
        raise InvalidArgument(f"note {problem}")
    return keep, note


async def resolve_pairs(
    redis: Redis,
    keys: Keys,
    memory_id: str,
    others: list[str],
    *,
    keep: Keep,
    by: str,
    note: str,
    now: float | None = None,
) -> list[ConflictResolution]:
    """Resolve the conflict of ``memory_id`` with each of ``others``; the pairs decided.

    A pair no longer in conflict (resolved meanwhile) or with a memory gone is skipped.
    """
    at = time.time() if now is None else now
    done = []
    with redis_errors("resolve the conflict"):
        for other in others:
            reply: Any = await scripts.resolve_pair(
                redis,
                first=keys.doc(memory_id),
                second=keys.doc(other),
                log=keys.resolutions,
                stats=keys.stats,
                first_id=memory_id,
                second_id=other,
                keep=keep,
                now=f"{at:.6f}",
                by=by,
                note=note,
            )
            if int(reply[0]) != 1:
                continue
            kept, archived = as_text(reply[1]), as_text(reply[2])
            done.append(
                ConflictResolution(
                    memory_id=memory_id,
                    other_id=other,
                    keep=keep,
                    kept=tuple(k for k in kept.split("|") if k),
                    archived=archived or None,
                    resolved_by=by,
                    resolved_at=at,
                    note=note,
                )
            )
    return done


async def undo_pairs(
    redis: Redis, keys: Keys, memory_id: str, others: list[str], *, by: str
) -> int:
    """Undo the resolutions of ``memory_id`` with ``others``: flagged again, nothing archived.

    Returns how many were undone.
    """
    undone = 0
    now = f"{time.time():.6f}"
    with redis_errors("undo the conflict resolution"):
        for other in others:
            undone += (
                await scripts.undo_pair(
                    redis,
                    first=keys.doc(memory_id),
                    second=keys.doc(other),
                    log=keys.resolutions,
                    stats=keys.stats,
                    first_id=memory_id,
                    second_id=other,
                    now=now,
                    by=by,
                )
                == 1
            )
    return undone


def undoable_resolutions(record: MemoryRecord) -> list[str]:
    """The partners whose resolution ``restore`` of this memory undoes.

    The memory a review archived: the pair with the one kept in its place. A
    memory a review kept (active): every pair it was resolved with. Anything
    else (archived by ``forget`` or a sweep): none, a plain restore.
    """
    if record.status == "archived":
        found = record.superseded_by
        return [found] if found and found in record.resolved_with else []
    return list(record.resolved_with) if record.status == "active" else []


async def list_resolutions(redis: Redis, keys: Keys, count: int = 100) -> list[ConflictResolution]:
    """The latest ``count`` entries of the resolutions log, newest first."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000:
        raise InvalidArgument(f"count must be an integer from 1 to 10000, got {count!r}")
    with redis_errors("read the conflict resolutions"):
        entries: Any = await redis.xrevrange(keys.resolutions, count=count)
    return [
        resolution_from_fields(
            as_text(entry_id), {as_text(k): as_text(v) for k, v in fields.items()}
        )
        for entry_id, fields in entries or []
    ]
