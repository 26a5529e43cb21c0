"""Contextual vectors, the search side: the third leg, Chinese queries, fallbacks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import EmbeddingError
from hindsight_redis.providers.contextual import MODEL_ID
from hindsight_redis.providers.multilingual import CHINESE_FIELD, unpack
from hindsight_redis.settings import Settings
from tests.integration.helpers import Drain, index_fields, write_and_drain

# A paraphrase sharing no word with its memory; the distractors share words
# and character n-grams with the query (hash vectors prefer them), none of its
# terms (the keyword leg finds nothing). Checked: without the contextual leg
# the target ranks 4th of 5; with it, 1st by a wide margin (0.60 vs 0.38).
TARGET = "The feline dozed on the windowsill all afternoon"
DISTRACTORS = [
    "Where does the backup job store its nightly logs",
    "The database migration finished on the staging cluster",
    "Quarterly revenue grew by four percent in Europe",
    "Does the deploy script retry when the gateway resets",
]
PARAPHRASE = "where did the cat take a nap"
CHINESE = "我们把数据库迁移到了新的服务器"


# ------------------------------------------------------------ search


async def test_hybrid_hits_carry_the_contextual_cosine(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    await write_and_drain(settings, [TARGET, *DISTRACTORS])
    hits = await client.search("database migration on staging", top_k=5)
    assert hits[0].content == DISTRACTORS[1]
    assert len(hits) == 5 and all(h.contextual is not None for h in hits)
    assert all(-1.0 <= (h.contextual or 0.0) <= 1.0001 for h in hits)
    # vector and keyword modes have no contextual leg
    for mode in ("vector", "keyword"):
        found = await client.search("database migration on staging", top_k=3, mode=mode)
        assert found and all(h.contextual is None for h in found)


async def test_contextual_leg_finds_a_paraphrase_sharing_no_word(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    ids, _ = await write_and_drain(settings, [TARGET, *DISTRACTORS])
    target_id = ids[0]
    hits = await client.search(PARAPHRASE, top_k=5)
    assert hits[0].id == target_id, [h.content for h in hits]
    assert hits[0].keyword is None  # not found by the keyword leg
    best_ctx = max(hits, key=lambda h: h.contextual or -1.0)
    assert best_ctx.id == target_id
    # the hash vectors alone rank other memories above it
    by_vector = await client.search(PARAPHRASE, top_k=5, mode="vector")
    assert by_vector[0].id != target_id
    # without the contextual signal the target is not first
    for update in ({"hybrid_contextual_weight": 0.0}, {"contextual_embedder": "none"}):
        async with AsyncMemoryClient(settings.model_copy(update=update)) as client:
            hits = await client.search(PARAPHRASE, top_k=5)
            assert hits[0].id != target_id, update
            assert target_id in [h.id for h in hits]


async def test_chinese_query_skips_the_contextual_leg(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    ids, report = await write_and_drain(settings, [CHINESE, *DISTRACTORS])
    # MiniLM reads English only: the Chinese memory gets the multilingual vector instead
    assert report.indexed == 5 and report.refined == 5
    key = client.keys.doc(ids[0])
    state, context, stored = await client.redis.hmget(key, ["refine", CONTEXT_FIELD, CHINESE_FIELD])
    assert (state, context) == (b"done", None)
    assert unpack(CHINESE, stored) is not None
    hits = await client.search("数据库迁移", top_k=5)
    assert hits[0].id == ids[0]
    assert all(h.contextual is None for h in hits)
    # an English query on the same index does get the leg (for English memories)
    english = await client.search("database migration", top_k=5)
    refined = [h for h in english if h.id != ids[0]]
    assert refined and all(h.contextual is not None for h in refined)


async def test_without_contextual_embedder(settings: Settings, redis: Redis) -> None:
    settings = settings.model_copy(update={"contextual_embedder": "none"})
    keys = Keys(settings.key_prefix, settings.namespace)
    ids, report = await write_and_drain(settings, [TARGET, *DISTRACTORS])
    assert report.indexed == 5 and report.refined == 0
    names = await index_fields(redis, keys.index_alias)
    assert CONTEXT_FIELD not in names and "vec_g1" in names and "refine" in names
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"context_model"] == b"" and meta[b"context_dims"] == b"0"
    async with AsyncMemoryClient(settings) as client:
        for mode in ("hybrid", "vector", "keyword"):
            hits = await client.search("database migration staging", top_k=3, mode=mode)
            assert hits[0].id == ids[2]
            assert all(h.contextual is None for h in hits)


async def test_with_contextual_embedder_the_index_has_the_field(
    client: AsyncMemoryClient, redis: Redis
) -> None:
    await client.search("anything", top_k=1)  # opens (creates) the index
    assert CONTEXT_FIELD in await index_fields(redis, client.keys.index_alias)


async def test_client_reindex_keeps_the_contextual_vectors(
    client: AsyncMemoryClient, settings: Settings, redis: Redis, drain: Drain
) -> None:
    ids, _ = await write_and_drain(settings, [TARGET, *DISTRACTORS])
    keys = Keys(settings.key_prefix, settings.namespace)
    before = await redis.hget(keys.doc(ids[0]), CONTEXT_FIELD)
    assert (await client.search(PARAPHRASE, top_k=1))[0].id == ids[0]
    moved = await client.reindex("hash")  # same models, new generation
    assert moved["generation"] == 2 and moved["contextual_model"] == MODEL_ID
    assert await redis.hmget(keys.doc(ids[0]), ["refine", CONTEXT_FIELD]) == [b"done", before]
    assert CONTEXT_FIELD in await index_fields(redis, keys.index_alias)
    hits = await client.search(PARAPHRASE, top_k=5)
    assert hits[0].id == ids[0] and all(h.contextual is not None for h in hits)
    assert (await drain()).refined == 0  # nothing to redo


async def test_a_broken_contextual_model_does_not_break_search(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    texts = ["Quinn rotates the API keys every quarter", "Rosa owns the billing dashboard"]
    await write_and_drain(settings, texts)
    assert (await client.search("who rotates the API keys", top_k=2))[0].contextual is not None
    state = client._searcher
    assert state is not None and state.contextual is not None

    async def broken(texts: Sequence[str]) -> Any:
        raise EmbeddingError("model file unreadable")

    inner = state.contextual.inner  # type: ignore[attr-defined]
    inner.embed = broken
    state.contextual.clear()  # type: ignore[attr-defined]
    hits = await client.search("who rotates the API keys", top_k=2)
    assert hits and hits[0].content == texts[0]
    assert all(h.contextual is None for h in hits)


async def test_any_embedder_can_be_the_contextual_one(settings: Settings, redis: Redis) -> None:
    # e.g. litellm:<model> for a hosted model; "hash" here (256 dims, no model)
    settings = settings.model_copy(update={"contextual_embedder": "hash"})
    ids, report = await write_and_drain(settings, [TARGET, *DISTRACTORS])
    assert report.refined == report.indexed == 5
    keys = Keys(settings.key_prefix, settings.namespace)
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"context_model"] == b"hash:v1-256" and meta[b"context_dims"] == b"256"
    assert len(await redis.hget(keys.doc(ids[0]), CONTEXT_FIELD) or b"") == 256 * 2  # float16
    async with AsyncMemoryClient(settings) as client:
        hits = await client.search(TARGET, top_k=3)
        # float16 vectors (normalised again by the index): cosines within 1e-3
        assert hits[0].id == ids[0] and hits[0].contextual == pytest.approx(1.0, abs=1e-3)
