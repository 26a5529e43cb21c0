"""Helpers shared by integration tests: predicate waits, stages that fail on purpose."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from hindsight_redis.pipeline.base import Candidate


async def wait_for(predicate: Callable[[], Awaitable[bool]], timeout_s: float = 20.0) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_s}s")
        await asyncio.sleep(0.02)


class FailOn:
    """A stage that raises for candidates whose content contains ``marker``."""

    name = "fail-on"

    def __init__(self, marker: str, error: Exception | None = None) -> None:
        self.marker = marker
        self.error = error or RuntimeError("boom")
        self.calls = 0

    async def process(self, batch: Sequence[Candidate]) -> None:
        self.calls += 1
        if any(self.marker in c.content for c in batch if c.alive):
            raise self.error


class Slow:
    """A stage that takes ``delay_s`` per batch, to keep a worker mid-batch."""

    name = "slow"

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def process(self, batch: Sequence[Candidate]) -> None:
        await asyncio.sleep(self.delay_s)


async def hset_memory(
    redis: Any, keys: Any, info: Any, model_id: str, candidate: Candidate, **overrides: str
) -> None:
    """HSET one memory document as the worker's commit does (no stream, no filters)."""
    from hindsight_redis.codec import doc_from_candidate

    memory_id = candidate.event.event_id
    doc = doc_from_candidate(
        candidate,
        memory_id=memory_id,
        vector_field=info.vector_field,
        embedding_model=model_id,
        now=time.time(),
    )
    doc.update(overrides)
    await redis.hset(keys.doc(memory_id), mapping=doc)
