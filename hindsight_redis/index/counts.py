"""Counting a namespace's memories in its index: active, archived, protected, unrefined.

Counts are ``FT.SEARCH ... LIMIT 0 0`` totals; without an index (or without
the search module) a count is None, so stats still work on a new namespace.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.fields import CREATED_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text, search_rows, search_total
from hindsight_redis.errors import (
    RedisCommandError,
    SearchModuleMissing,
    map_redis_error,
    redis_errors,
)
from hindsight_redis.index.filters import refine_pending_filter, tag_clause


def memory_count_queries(keys: Keys) -> dict[str, str]:
    """The ``FT.SEARCH`` queries counting a namespace's memories, by ``QueueState.memories`` key."""
    namespace = tag_clause("namespace", keys.namespace)
    active, archived = tag_clause("status", "active"), tag_clause("status", "archived")
    return {
        "active": f"{namespace} {active}",
        "archived": f"{namespace} {archived}",
        "protected": f"{namespace} {active} {tag_clause('protected', '1')}",
    }


def count_command(keys: Keys, query: str) -> tuple[str, ...]:
    """``FT.SEARCH`` returning only the number of memories matching ``query``."""
    return ("FT.SEARCH", keys.index_alias, query, "LIMIT", "0", "0", "DIALECT", "2")


def refine_backlog_command(keys: Keys) -> tuple[str, ...]:
    """``FT.SEARCH`` counting the memories waiting for their contextual vector and returning
    the oldest one's ``created_at`` (``refine_backlog`` reads the reply)."""
    query = refine_pending_filter(keys.namespace)
    return (
        *("FT.SEARCH", keys.index_alias, query, "RETURN", "1", CREATED_FIELD),
        *("SORTBY", CREATED_FIELD, "ASC", "LIMIT", "0", "1", "DIALECT", "2"),
    )


def refine_backlog(reply: Any) -> tuple[int | None, float | None]:
    """How many memories wait for their contextual vector and when the oldest was written
    (unix seconds; None when none waits), from a ``refine_backlog_command`` reply; (None,
    None) without an index."""
    count = search_count(reply)
    if not count:
        return count, None
    rows = search_rows(reply)
    created = rows[0].fields.get(CREATED_FIELD) if rows else None
    return count, float(as_text(created)) if created is not None else None


def search_count(reply: Any) -> int | None:
    """The total of a ``count_command`` reply; None when it failed for want of an index.

    (No index yet, or no search module: stats still work.)
    """
    if isinstance(reply, Exception):
        mapped = map_redis_error(reply, "count the memories")
        if isinstance(mapped, RedisCommandError | SearchModuleMissing):
            return None
        raise reply
    return search_total(reply)


async def memory_counts(redis: Redis, keys: Keys) -> dict[str, int] | None:
    """Stored memories: ``active``, ``archived`` and ``protected`` (of the active ones).

    None when there is no index yet (or no search module).
    """
    queries = memory_count_queries(keys)
    try:
        with redis_errors("count the memories"):
            pipe = redis.pipeline(transaction=False)
            for query in queries.values():
                pipe.execute_command(*count_command(keys, query))
            replies = await pipe.execute()
    except (RedisCommandError, SearchModuleMissing):
        return None
    return {name: search_total(reply) for name, reply in zip(queries, replies, strict=True)}
