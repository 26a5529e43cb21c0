"""Helpers shared by integration tests: predicate waits, stages that fail on purpose,
memory documents written straight to an index."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.index import IndexInfo, MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent
from hindsight_redis.pipeline.base import Candidate
from hindsight_redis.providers.embedders import Embedder, HashEmbedder
from hindsight_redis.search import search_memories
from hindsight_redis.settings import Settings


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


@dataclass
class IndexEnv:
    """A namespace's index with the hash embedder; memories written without a worker."""

    redis: Redis
    keys: Keys
    settings: Settings
    embedder: HashEmbedder
    info: IndexInfo

    async def put(self, memory_id: str, content: str, **fields: Any) -> None:
        """HSET one memory document the way the worker's commit does."""
        status = fields.pop("status", "active")
        conflicts = fields.pop("conflicts_with", [])
        event = MemoryEvent(
            event_id=memory_id,
            namespace=self.keys.namespace,
            content=content,
            created_at=fields.pop("created_at", time.time()),
            **fields,
        )
        cand = Candidate("0-0", event, content, conflicts_with=list(conflicts))
        cand.embedding = (await self.embedder.embed([content]))[0]
        await hset_memory(
            self.redis, self.keys, self.info, self.embedder.model_id, cand, status=status
        )

    async def indexed(self, count: int) -> None:
        """Wait until the index holds ``count`` documents."""

        async def done() -> bool:
            info = await self.redis.ft(self.info.alias).info()  # type: ignore[no-untyped-call]
            return int(info["num_docs"]) >= count

        await wait_for(done)

    async def search(self, query: str, **kwargs: Any) -> list[str]:
        """Ids of the hits of ``search_memories``."""
        hits = await search_memories(
            self.redis, self.keys, self.settings, self.embedder, self.info, query, **kwargs
        )
        return [h.id for h in hits]


async def open_index_env(
    redis: Redis, settings: Settings, contextual: Embedder | None = None
) -> IndexEnv:
    """Ensure the namespace's index (hash embedder, optional contextual one)."""
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = HashEmbedder()
    info = await MemoryIndex(redis, keys, settings).ensure(embedder, contextual)
    return IndexEnv(redis, keys, settings, embedder, info)
