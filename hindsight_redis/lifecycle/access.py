"""Access statistics: searches count their hits cheaply, workers fold them in.

A search adds one to each hit's counter in the namespace's access log
(``Keys.access_log``), never writing the memories themselves: a hot memory
costs one counter, not one hash rewrite (and re-index) per search. The
counts are sent in the background (``HitCounter``), so no search waits for
them, in one script call per round trip (``scripts.count_hits``: one command
to pack, not one per hit), and at most one round trip per ``COALESCE_S``:
the counts of the searches meanwhile share it (a round trip per search cost
a socket write and a wake-up of Redis beside the next search).
Workers call ``flush_access_log`` periodically (while writes keep coming, at
most every ``pipeline.consumer.FOLD_WHILE_BUSY_S``); it moves up to ``batch``
pending counts into the memories' ``access_count`` and ``last_accessed_at``,
``scripts.MEMORIES_PER_CALL`` memories per script call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterable

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import redis_errors
from hindsight_redis.redis import scripts

logger = logging.getLogger(__name__)


COALESCE_S = 0.1
"""How long counts wait for more before they are sent (``HitCounter``)."""
# Memories per count_hits call: a script holds Redis for its whole run.
_MEMORIES_PER_CALL = 500


class HitCounter:
    """Counts search hits in the access log in the background, coalescing bursts.

    ``count`` returns at once; one task waits ``coalesce_s``, sends what is
    pending in one round trip, then what was counted meanwhile, until nothing
    is left. A failed round trip (a full disk) is logged and its counts dropped:
    they are statistics, and the search already has its answer. ``drain``
    waits until every count so far is sent (``aclose`` of the clients calls
    it before closing the connection).
    """

    def __init__(self, redis: Redis, keys: Keys, *, coalesce_s: float = COALESCE_S) -> None:
        self.redis = redis
        self.keys = keys
        self.coalesce_s = coalesce_s
        self._pending: list[str] = []
        self._task: asyncio.Task[None] | None = None

    def count(self, memory_ids: Iterable[str]) -> None:
        """Count one access of each of ``memory_ids`` (sent in the background)."""
        self._pending.extend(memory_ids)
        if self._pending and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._send())

    async def drain(self) -> None:
        """Wait until the counts so far are sent (or their round trip failed)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _send(self) -> None:
        await asyncio.sleep(self.coalesce_s)
        while self._pending:
            batch, self._pending = self._pending, []
            counts = list(Counter(batch).items())
            try:
                for start in range(0, len(counts), _MEMORIES_PER_CALL):
                    chunk = counts[start : start + _MEMORIES_PER_CALL]
                    await scripts.count_hits(
                        self.redis,
                        access_log=self.keys.access_log,
                        counts=[str(part) for pair in chunk for part in pair],
                    )
            except Exception as e:
                logger.warning("could not count %d search hits: %s", len(batch), e)


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
                merge_log=keys.merge_log,
                memories=[keys.doc(memory_id) for memory_id in chunk],
                now=stamp,
                ids=chunk,
            )
    return done
