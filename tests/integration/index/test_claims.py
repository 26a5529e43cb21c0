"""Content claims expire with the outcomes; those written before are given an expiry."""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.index.claims import expire_content_claims
from tests.integration.helpers import Drain


async def test_claims_expire_and_old_ones_are_given_an_expiry(
    client: AsyncMemoryClient, settings: Settings, drain: Drain, redis: Redis
) -> None:
    await client.write("The billing service deploys from the release branch on Fridays.")
    await drain()
    pattern = client.keys.pattern_of("content")
    (claim,) = [k async for k in redis.scan_iter(match=pattern)]
    ttl = settings.worker.outcome_ttl_s
    assert 0 < await redis.ttl(claim) <= ttl  # written with one
    old = client.keys.content_claim("0" * 64)  # as written before issue 36: no expiry
    await redis.set(old, "m-old")
    assert await expire_content_claims(redis, client.keys, ttl) == 1
    assert 0 < await redis.ttl(old) <= ttl and await redis.get(old) == b"m-old"
    assert await expire_content_claims(redis, client.keys) == 0  # idempotent
