"""``reindex`` as the operators' commands call it: under an embedder named by a setting."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.settings import EmbeddingSettings, IndexSettings, SearchSettings


async def reindex_namespace(
    redis: Redis,
    keys: Keys,
    index: IndexSettings,
    search: SearchSettings,
    embedding: EmbeddingSettings,
    embedder: str,
) -> dict[str, Any]:
    """``MemoryIndex.reindex`` under ``embedder`` (a setting's value); what the new index is."""
    from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings

    new_embedding = embedding.model_copy(update={"embedder": embedder})
    info = await MemoryIndex(redis, keys, index, search, new_embedding).reindex(
        embedder_from_settings(new_embedding), contextual_from_settings(new_embedding)
    )
    return {
        "index": info.name,
        "generation": info.generation,
        "model": info.model_id,
        "dims": info.dims,
        "datatype": info.datatype,
        "contextual_model": info.context_model or None,
    }
