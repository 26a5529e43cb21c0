"""How far the workers are behind a namespace's stream: accepted and unprocessed writes."""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import entries_added
from hindsight_redis.errors import RedisCommandError, redis_errors


async def accepted(redis: Redis, keys: Keys) -> int:
    """Writes ever appended to the stream (trimming does not lower it); 0 without a stream."""
    try:
        with redis_errors("read the stream"):
            return entries_added(await redis.xinfo_stream(keys.stream))
    except RedisCommandError:
        return 0


async def backlog(redis: Redis, keys: Keys) -> int:
    """Accepted writes not yet processed (indexed, merged, dropped or dead-lettered).

    One round trip: the write gate refreshes it while writers wait.
    """
    with redis_errors("check the backlog", hint="retry the write"):
        pipe = redis.pipeline(transaction=False)
        pipe.xinfo_stream(keys.stream)
        pipe.hget(keys.stats, "processed")
        info, processed = await pipe.execute(raise_on_error=False)
        if isinstance(processed, Exception):
            raise processed
        if isinstance(info, Exception):
            if "no such key" in str(info).lower():
                return 0  # no stream yet: nothing accepted
            raise info
    return max(entries_added(info) - int(processed or 0), 0)
