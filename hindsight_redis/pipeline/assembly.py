"""Builds the default stage list of a worker from settings.

Order: the filter layers (rules, summarize, score), then embed, then dedup
and conflict checks against what is stored. The index is created (or checked
against the embedder) before the first entry is read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio as aioredis

from hindsight_redis.keys import Keys
from hindsight_redis.pipeline.base import Stage
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings
from hindsight_redis.settings import Settings


@dataclass(slots=True)
class BuiltPipeline:
    """The stages a worker runs and what its commits need to know."""

    stages: list[Stage]
    vector_field: str
    embedding_model: str
    generation: int
    contextual: bool = False
    maintenance: Callable[[], Awaitable[object]] | None = None
    ensure_index: Callable[[], Awaitable[object]] | None = None
    refiner: Refiner | None = None


async def build_pipeline(redis: aioredis.Redis, keys: Keys, settings: Settings) -> BuiltPipeline:
    """Stages for ``settings``, with the index ensured for their embedder."""
    from hindsight_redis.access import flush_access_log
    from hindsight_redis.index import MemoryIndex
    from hindsight_redis.pipeline.dedup import DedupStage, judge_from_settings
    from hindsight_redis.pipeline.embed import EmbedStage
    from hindsight_redis.pipeline.filters import build_filter_stages

    embedder = embedder_from_settings(settings)
    contextual = contextual_from_settings(settings)
    index = MemoryIndex(redis, keys, settings)
    info = await index.ensure(embedder, contextual)
    refiner = None
    if contextual is not None and info.context_model == contextual.model_id:
        refiner = Refiner(redis, keys, contextual, batch_size=settings.refine_batch_size)
    stages: list[Stage] = [
        *build_filter_stages(settings),
        EmbedStage(embedder),
        DedupStage(redis, keys, settings, info, judge=judge_from_settings(settings)),
    ]

    async def maintenance() -> object:
        """Periodic upkeep: fold batched access counts into the memories."""
        return await flush_access_log(redis, keys)

    return BuiltPipeline(
        stages=stages,
        vector_field=info.vector_field,
        embedding_model=info.model_id,
        generation=info.generation,
        contextual=info.has_context,
        maintenance=maintenance,
        ensure_index=lambda: index.ensure(embedder, contextual),
        refiner=refiner,
    )
