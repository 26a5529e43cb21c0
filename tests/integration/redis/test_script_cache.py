"""Scripts against the real server: a server that forgot its scripts (a restart) loses nothing."""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.keys import Keys
from hindsight_redis.redis import scripts
from tests.integration.helpers import Drain


async def test_a_script_the_server_forgot_is_loaded_again(
    redis: Redis, client: AsyncMemoryClient
) -> None:
    key = client.keys.doc("m1")
    await redis.hset(key, "content", "x")
    await redis.script_flush()
    assert await scripts.update_existing(redis, memory=key, fields=["status", "archived"]) == 1
    assert await redis.hget(key, "status") == b"archived"
    assert await redis.script_exists(scripts.update_existing.sha) == [True]


async def test_a_pipeline_resends_only_the_refused_calls(
    redis: Redis, client: AsyncMemoryClient
) -> None:
    keys: Keys = client.keys
    await redis.hset(keys.doc("a"), "content", "x")
    await redis.script_flush()
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hincrby(keys.stats, "plain", 1)  # not a script: must run once
        scripts.update_existing.queue(pipe, memory=keys.doc("a"), fields=["n", "1"])
        scripts.update_existing.queue(pipe, memory=keys.doc("absent"), fields=["n", "1"])
        results = await scripts.execute(pipe)
    assert results == [1, 1, 0]
    assert await redis.hget(keys.stats, "plain") == b"1"
    assert await redis.hget(keys.doc("a"), "n") == b"1"
    assert not await redis.exists(keys.doc("absent"))


async def test_writes_and_commits_survive_a_script_flush(
    client: AsyncMemoryClient, redis: Redis, drain: Drain
) -> None:
    await client.write_many([{"content": "The release train leaves every Tuesday at 10:00"}])
    await redis.script_flush()  # e.g. Redis restarted between the write and the worker
    receipts = await client.write_many(
        [{"content": "Carol owns the billing dashboard since March 2026"}]
    )
    await redis.script_flush()
    report = await drain()
    assert report.indexed == 2
    record = await client.get(receipts[0].id)
    assert record is not None and record.status == "active"
