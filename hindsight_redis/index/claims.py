"""Content claims written before they expired: give them the outcomes' lifetime.

A content claim (``Keys.content_claim``) settles two workers indexing one text at once; a
twin written later meets the memory in the dedup stage's lookup, so since issue 36 a claim
expires with the outcomes (``outcome_ttl_s``) instead of costing ~150 bytes a memory
forever. ``expire_content_claims`` is the stored-data migration for claims written before:
idempotent (``EXPIRE ... NX`` leaves a claim that expires already as it is), and of the
shape of an ``upgrade.Step``'s ``run``.
"""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import redis_errors
from hindsight_redis.settings import WorkerSettings

_BATCH = 1000
_OUTCOME_TTL_S: int = WorkerSettings.model_fields["outcome_ttl_s"].default


async def expire_content_claims(redis: Redis, keys: Keys, ttl_s: int = _OUTCOME_TTL_S) -> int:
    """Give every content claim of the namespace without an expiry one of ``ttl_s``
    seconds; how many were given one (0 once done: safe to run again)."""
    given = 0
    with redis_errors("expire the content claims"):
        names = [k async for k in redis.scan_iter(match=keys.pattern_of("content"), count=1000)]
        for start in range(0, len(names), _BATCH):
            async with redis.pipeline(transaction=False) as pipe:
                for name in names[start : start + _BATCH]:
                    pipe.expire(name, ttl_s, nx=True)
                given += sum(bool(r) for r in await pipe.execute())
    return given
