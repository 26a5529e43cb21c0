"""Access statistics: searches count their hits cheaply, workers fold them in.

A search adds one ``HINCRBY`` per hit to the namespace's access log
(``Keys.access_log``) in the round trip that fetches the hits, never writing
the memories themselves: a hot memory costs one counter, not one hash
rewrite (and re-index) per search. Workers call ``flush_access_log``
periodically; it moves up to ``batch`` pending counts into the memories'
``access_count`` and ``last_accessed_at``, ``scripts.MEMORIES_PER_CALL``
memories per script call.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from hindsight_redis import scripts
from hindsight_redis.errors import redis_errors
from hindsight_redis.keys import Keys
from hindsight_redis.resp import as_text


def count_hits(pipe: Pipeline, keys: Keys, memory_ids: Iterable[str]) -> None:
    """Queue one access-log increment per hit on ``pipe``."""
    for memory_id in memory_ids:
        pipe.hincrby(keys.access_log, memory_id, 1)


async def flush_access_log(
    redis: Redis, keys: Keys, *, batch: int = 1000, now: float | None = None
) -> int:
    """Fold pending hit counts into ``access_count``/``last_accessed_at``; returns entries folded.

    Reads only what it folds (an ``HSCAN`` page of about ``batch`` ids), and
    the script re-reads each count, so hits counted meanwhile are not lost.
    """
    stamp = f"{time.time() if now is None else now:.6f}"
    with redis_errors("fold access counts into the memories"):
        found: dict[str, None] = {}  # HSCAN may repeat a field across pages
        cursor = 0
        while True:
            cursor, page = await redis.hscan(keys.access_log, cursor, count=batch - len(found))
            found.update(dict.fromkeys(as_text(memory_id) for memory_id in page))
            if cursor == 0 or len(found) >= batch:
                break
        ids = list(found)[:batch]
        if not ids:
            return 0
        done = 0
        for start in range(0, len(ids), scripts.MEMORIES_PER_CALL):
            chunk = ids[start : start + scripts.MEMORIES_PER_CALL]
            done += await scripts.flush_access(
                redis,
                access_log=keys.access_log,
                memories=[keys.doc(memory_id) for memory_id in chunk],
                now=stamp,
                ids=chunk,
            )
    return done
