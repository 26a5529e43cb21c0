"""The client's search session: embedder, index info and query cache, opened once."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis

from hindsight_redis.index import IndexInfo, MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryRecord, SearchFilters, SearchHit
from hindsight_redis.pipeline.assembly import contextual_from_settings, embedder_from_settings
from hindsight_redis.providers.embedders import CachedEmbedder, Embedder
from hindsight_redis.search import list_conflicts, search_memories
from hindsight_redis.settings import Settings


@dataclass(slots=True)
class SearchService:
    """What a client needs to search: the index it checked and a cached embedder."""

    redis: aioredis.Redis
    keys: Keys
    settings: Settings
    embedder: Embedder
    info: IndexInfo
    contextual: Embedder | None = None

    @classmethod
    async def open(cls, redis: aioredis.Redis, keys: Keys, settings: Settings) -> SearchService:
        """Ensure the index exists and matches the configured embedder."""
        embedder = CachedEmbedder(embedder_from_settings(settings))
        ctx = contextual_from_settings(settings)
        contextual = CachedEmbedder(ctx) if ctx is not None else None
        info = await MemoryIndex(redis, keys, settings).ensure(embedder, contextual)
        return cls(redis, keys, settings, embedder, info, contextual)

    async def search(
        self, query: str, *, top_k: int, mode: str, filters: SearchFilters
    ) -> list[SearchHit]:
        """Run one search; see ``hindsight_redis.search.search_memories``."""
        return await search_memories(
            self.redis,
            self.keys,
            self.settings,
            self.embedder,
            self.info,
            query,
            top_k=top_k,
            mode=mode,
            filters=filters,
            contextual=self.contextual,
        )

    async def conflicts(self, limit: int = 100) -> list[MemoryRecord]:
        """Memories flagged for review because they contradict another."""
        return await list_conflicts(self.redis, self.keys, limit=limit)
