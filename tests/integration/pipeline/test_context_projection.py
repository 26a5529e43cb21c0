"""Contextual vectors stored projected (``contextual_stored_dims``) on a real Redis.

A new index stores MiniLM's vectors on the first 256 directions of the
shipped basis; one configured with 0 stores them whole, as every index of an
earlier release does. Export files say which, and an import converts whole
vectors into a projected index, or leaves a refiner to recompute them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.providers.contextual import MiniLMEmbedder
from hindsight_redis.providers.projection import project
from tests.integration.helpers import Drain
from tests.integration.index.test_vector_datatype import FACTS, failures

QUERY = "which region does the billing service run in"


async def _stored(redis: Redis, key: str) -> np.ndarray:
    raw = await redis.hget(key, CONTEXT_FIELD)
    assert isinstance(raw, bytes)
    return np.frombuffer(raw, "<f2").astype(np.float32)


async def test_whole_vectors_when_configured_and_a_projected_import_converts_them(
    redis: Redis, settings: Settings, drain: Drain, minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    whole = settings.model_copy(update={"contextual_stored_dims": 0})
    async with AsyncMemoryClient(whole) as client:
        receipts = await client.write_many([{"content": fact} for fact in FACTS])
        await drain(whole)
        info = await MemoryIndex(
            redis, client.keys, whole.index, whole.search, whole.embedding
        ).info()
        assert info is not None and (info.context_projection, info.context_field_dims) == ("", 384)
        vector = await _stored(redis, client.keys.doc(receipts[1].id))
        assert vector.shape == (384,)
        np.testing.assert_allclose(vector, minilm.embed_sync([FACTS[1]])[0], atol=1e-3)
        hits = await client.search(QUERY, top_k=1)
        assert hits[0].id == receipts[1].id and hits[0].contextual is not None
        path = tmp_path / "whole.jsonl.gz"
        assert (await client.export(path, status="active")).count == len(FACTS)

    projected = settings.model_copy(update={"namespace": "projected"})
    async with AsyncMemoryClient(projected) as other:
        report = await other.import_file(path)
        assert (report.imported, report.reembedded) == (len(FACTS), 0)
        info = await MemoryIndex(
            redis, other.keys, projected.index, projected.search, projected.embedding
        ).info()
        assert info is not None and (info.context_projection, info.context_field_dims) == (
            "pca256",
            256,
        )
        key = other.keys.doc(receipts[1].id)
        assert await redis.hget(key, "refine") == b"done"  # converted, not left to a refiner
        np.testing.assert_allclose(
            await _stored(redis, key), project(vector[None, :], "pca256")[0], atol=2e-3
        )
        hits = await other.search(QUERY, top_k=1)
        assert hits[0].id == receipts[1].id and hits[0].contextual is not None
        assert await failures(redis, other.keys.index_alias) == 0


async def test_projected_vectors_imported_whole_are_recomputed(
    redis: Redis, settings: Settings, drain: Drain, minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    async with AsyncMemoryClient(settings) as client:
        receipts = await client.write_many([{"content": fact} for fact in FACTS])
        await drain()
        assert (await _stored(redis, client.keys.doc(receipts[1].id))).shape == (256,)
        path = tmp_path / "projected.jsonl.gz"
        assert (await client.export(path, status="active")).count == len(FACTS)
    whole = settings.model_copy(update={"namespace": "whole", "contextual_stored_dims": 384})
    async with AsyncMemoryClient(whole) as other:
        assert (await other.import_file(path)).imported == len(FACTS)
        key = other.keys.doc(receipts[1].id)
        # 256 directions cannot be made 384 again: the memory waits for a refiner
        assert await redis.hmget(key, ["refine", CONTEXT_FIELD]) == [b"pending", None]
        assert (await drain(whole)).refined == len(FACTS)
        np.testing.assert_allclose(
            await _stored(redis, key), minilm.embed_sync([FACTS[1]])[0], atol=1e-3
        )
        hits = await other.search(QUERY, top_k=1)
        assert hits[0].id == receipts[1].id and hits[0].contextual is not None
