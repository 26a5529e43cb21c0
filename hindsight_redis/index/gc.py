"""Keep keyword scores right on any Redis: run the search module's GC every 2 seconds.

RediSearch 2.10 scores BM25 wrongly for documents updated since its last
garbage collection, and memories are updated after indexing (the contextual
refiner, access-count folds, archiving). With the module's defaults (GC every
30 s, clean threshold 100) held-out LoCoMo recall@10 fell from 0.654 to
0.538. The embedded server starts with the right arguments; on any other
server workers and searchers set them at connect time where the server
allows it (``FT.CONFIG SET``, or ``CONFIG SET search-fork-gc-*`` on Redis 8),
and say loudly where it does not. ``search_gc_tune = false`` leaves the
server alone.
"""

from __future__ import annotations

import logging
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import HindsightError, redis_errors
from hindsight_redis.settings import ConnectionSettings, IndexSettings, redact_url

logger = logging.getLogger(__name__)
RUN_INTERVAL_S = 2
CLEAN_THRESHOLD = 1
_MODULE = {"FORK_GC_RUN_INTERVAL": RUN_INTERVAL_S, "FORK_GC_CLEAN_THRESHOLD": CLEAN_THRESHOLD}
_REDIS8 = {
    "search-fork-gc-run-interval": RUN_INTERVAL_S,
    "search-fork-gc-clean-threshold": CLEAN_THRESHOLD,
}
_warned: set[str] = set()
_tuned: set[str] = set()


def _value(reply: Any) -> int:
    # RESP3: {name: value}; RESP2: [[name, value]] (FT.CONFIG) or [name, value] (CONFIG)
    if isinstance(reply, dict):
        return int(as_text(next(iter(reply.values()))))
    first = reply[0]
    return int(as_text(first[1] if isinstance(first, list | tuple) else reply[1]))


async def read_gc(client: aioredis.Redis) -> tuple[int, int] | None:
    """(run interval s, clean threshold) of the search module, or None if the server won't say."""
    try:
        with redis_errors("read the search GC settings"):
            values = [
                _value(await client.execute_command("FT.CONFIG", "GET", name))  # type: ignore[no-untyped-call]
                for name in _MODULE
            ]
        return values[0], values[1]
    except (HindsightError, IndexError, KeyError, StopIteration, TypeError, ValueError):
        return None


def _good(gc: tuple[int, int] | None) -> bool:
    return gc is not None and gc[0] <= RUN_INTERVAL_S and gc[1] <= CLEAN_THRESHOLD


async def tune_search_gc(client: aioredis.Redis, where: str) -> bool:
    """Make the search GC run every 2 s; True when it does (now or already).

    ``where`` names the server in the one warning logged per process when it
    cannot be changed (no permission, a managed service).
    """
    if _good(await read_gc(client)):
        return True
    for command, settings in (("FT.CONFIG", _MODULE), ("CONFIG", _REDIS8)):
        try:
            with redis_errors("tune the search GC"):
                for name, value in settings.items():
                    await client.execute_command(command, "SET", name, str(value))  # type: ignore[no-untyped-call]
        except HindsightError:
            continue
        if _good(await read_gc(client)):
            logger.info("search GC set to run every %ss on %s", RUN_INTERVAL_S, where)
            return True
    if where not in _warned:
        _warned.add(where)
        logger.warning(
            "could not make the search module's GC run every %ss on %s: keyword scores will "
            "be wrong for memories updated since its last GC (recall drops, e.g. LoCoMo "
            "0.654 -> 0.538); set search-fork-gc-run-interval %s and "
            "search-fork-gc-clean-threshold %s (Redis 8) or FORK_GC_RUN_INTERVAL %s "
            "FORK_GC_CLEAN_THRESHOLD %s (module arguments) on the server",
            RUN_INTERVAL_S,
            where,
            RUN_INTERVAL_S,
            CLEAN_THRESHOLD,
            RUN_INTERVAL_S,
            CLEAN_THRESHOLD,
        )
    return False


async def ensure_search_gc(
    client: aioredis.Redis, index: IndexSettings, connection: ConnectionSettings
) -> None:
    """``tune_search_gc`` once per process and server (``connection.redis_url``), unless
    ``index.search_gc_tune`` is off."""
    if not index.search_gc_tune:
        return
    url = connection.redis_url
    where = redact_url(url) if url else "the embedded server"
    if where in _tuned:
        return
    if await tune_search_gc(client, where):
        _tuned.add(where)
