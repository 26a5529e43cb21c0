"""A client's first calls made at once (a model's parallel tool calls) share what they open."""

from __future__ import annotations

import asyncio

from hindsight_redis import AsyncMemoryClient, Settings
from tests.integration.helpers import Drain


async def test_concurrent_first_calls_open_one_pool_and_one_searcher(
    settings: Settings, client: AsyncMemoryClient, drain: Drain
) -> None:
    await client.write("The staging cluster is rebuilt every Sunday night", agent_id="ops")
    await drain()
    fresh = AsyncMemoryClient(settings)
    try:
        opened: list[object] = []
        real_open = fresh._open_searcher

        async def counting_open() -> object:
            searcher = await real_open()
            opened.append(searcher)
            return searcher

        fresh._open_searcher = counting_open  # type: ignore[method-assign]
        results = await asyncio.gather(
            *(fresh.search("when is staging rebuilt", top_k=3) for _ in range(8))
        )
        assert all(hits and "Sunday" in hits[0].content for hits in results)
        # every concurrent first search got the same searcher: none opened and dropped
        assert len({id(s) for s in opened}) == 1
        assert fresh._searcher is opened[0]
    finally:
        await fresh.aclose()
