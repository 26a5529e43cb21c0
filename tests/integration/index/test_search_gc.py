"""Keyword scores stay right on a Redis whose search module keeps its default GC settings."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.index.gc import read_gc, tune_search_gc
from hindsight_redis.redis.server import find_binaries
from tests.integration.helpers import bare_redis, wait_for


def _search_module() -> str:
    return str(next(m for m in find_binaries().modules if m.name.startswith("redisearch")))


async def test_on_a_default_server_workers_set_the_gc_and_scores_recover(
    settings: Settings, tmp_path: Path
) -> None:
    # Loaded by hand, without the launcher's arguments: GC every 30 s, threshold 100,
    # as on Redis Stack, Redis 8 images and managed services.
    with bare_redis(tmp_path, "--loadmodule", _search_module()) as url:
        raw = aioredis.Redis.from_url(url)
        assert await read_gc(raw) == (30, 100)
        on_it = settings.model_copy(update={"redis_url": url, "contextual_embedder": "none"})
        async with AsyncMemoryClient(on_it) as client:
            await client.write_many(
                [
                    {"content": f"note {n} about deploys, rollbacks and billing service {n % 7}"}
                    for n in range(40)
                ]
            )
            await Worker(on_it).run_async(burst=True)
            assert await read_gc(raw) == (2, 1)  # the worker tuned it at start

            async def scores() -> dict[str, float]:
                hits = await client.search("billing rollbacks 3", mode="keyword", top_k=20)
                return {h.id: h.bm25 or 0.0 for h in hits}

            before = await scores()
            assert before
            # Every memory updated after indexing, as a refine pass or an access fold does.
            ids = list(before)
            async with raw.pipeline(transaction=False) as pipe:
                for memory_id in ids:
                    pipe.hset(client.keys.doc(memory_id), "refine", "done")
                await pipe.execute()

            async def recovered() -> bool:
                after = await scores()
                return after.keys() == before.keys() and all(
                    abs(after[k] - before[k]) < 0.25 * before[k] for k in before
                )

            await wait_for(recovered, timeout_s=10)  # with the 30 s default: ~70x too high
        await raw.aclose()


async def test_a_server_that_refuses_gets_one_loud_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with bare_redis(tmp_path, "--loadmodule", _search_module()) as url:
        admin = aioredis.Redis.from_url(url)
        # A managed-service-like user: everything but configuration.
        await admin.execute_command(
            "ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all", "-config", "-ft.config"
        )
        limited = aioredis.Redis.from_url(url, username="app", password="pw")
        with caplog.at_level(logging.WARNING, logger="hindsight_redis.index.gc"):
            assert not await tune_search_gc(limited, "a managed server")
            assert not await tune_search_gc(limited, "a managed server")
        warnings = [r for r in caplog.records if "could not make" in r.getMessage()]
        assert len(warnings) == 1 and "search-fork-gc-run-interval" in warnings[0].getMessage()
        assert await read_gc(admin) == (30, 100)  # untouched
        off = Settings(redis_url=url, search_gc_tune=False, embedder="hash")
        from hindsight_redis.index.gc import ensure_search_gc

        await ensure_search_gc(admin, off.index, off.connection)
        assert await read_gc(admin) == (30, 100)  # the setting leaves the server alone
        await limited.aclose()
        await admin.aclose()
