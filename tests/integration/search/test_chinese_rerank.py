"""The multilingual re-ranking of Chinese searches, on the real model and Redis: the
refiners store each Chinese memory's vector, a search reads it (or embeds a memory
without one), and a question worded apart from its memory finds it first."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.providers.multilingual import CHINESE_FIELD, shared_model, unpack
from hindsight_redis.settings import Settings
from tests.integration.helpers import write_and_drain

MEMORIES = [
    "我女儿每周三下午去学游泳，教练姓刘",
    "孩子周三下午有钢琴课，在少年宫上",
    "老李的车是白色的特斯拉，停在地下二层",
    "地下车库二层的灯坏了，物业说下周修",
    "我对青霉素过敏，看病时一定要告诉医生",
    "医生说我的血压偏高，要少吃咸的",
    "The quarterly report goes out on Mondays",
]
# question -> the memory that answers it, in other words
QUESTIONS = {"娃星期三学哪种乐器": 1, "去看病要提醒大夫什么": 4, "老李开什么车": 2}


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[AsyncMemoryClient]:
    """A client of the shipped static model (the hash one's vectors mean nothing across
    languages)."""
    async with AsyncMemoryClient(settings) as connected:
        yield connected


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test's settings with the shipped static model."""
    return settings.model_copy(update={"embedder": "local"})


async def test_chinese_questions_find_their_memory_first(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    ids, report = await write_and_drain(settings, MEMORIES)
    assert report.indexed == len(MEMORIES)
    # the refiners gave every Chinese memory its multilingual vector, none to the English one
    for memory_id, content in zip(ids, MEMORIES, strict=True):
        state, stored, context = await client.redis.hmget(
            client.keys.doc(memory_id), ["refine", CHINESE_FIELD, CONTEXT_FIELD]
        )
        assert state == b"done"
        chinese = not content.startswith("The")
        assert (unpack(content, stored) is not None) is chinese
        assert (context is None) is chinese
    for question, answer in QUESTIONS.items():
        hits = await client.search(question, top_k=3)
        assert hits[0].id == ids[answer], (question, [h.content for h in hits])
        assert [h.fused for h in hits] == sorted((h.fused for h in hits), reverse=True)
    # why: the keywords alone rank the swimming lesson (same day, same child) first
    plain = settings.model_copy(update={"chinese_rerank_weight": 0.0})
    async with AsyncMemoryClient(plain) as without:
        hits = await without.search("娃星期三学哪种乐器", top_k=3)
        assert hits[0].id != ids[1] and ids[1] in [h.id for h in hits]
    # the model agrees: the piano lesson is nearer the question than the swimming one
    model = shared_model()
    assert model is not None
    query = await model.embed_query("娃星期三学哪种乐器")
    piano, swimming = await model.embed([MEMORIES[1], MEMORIES[0]])
    assert float(np.dot(piano, query)) > float(np.dot(swimming, query))


async def test_a_memory_without_its_vector_is_embedded_by_the_search(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    ids, _ = await write_and_drain(settings, MEMORIES)
    # vectors gone (an import from a release before them) or stale (the content changed)
    await client.redis.hdel(client.keys.doc(ids[1]), CHINESE_FIELD)
    await client.redis.hset(client.keys.doc(ids[4]), CHINESE_FIELD, b"\0" * 772)
    for question, answer in QUESTIONS.items():
        hits = await client.search(question, top_k=3)
        assert hits[0].id == ids[answer], (question, [h.content for h in hits])
    # the search reads; it writes nothing back
    assert await client.redis.hget(client.keys.doc(ids[1]), CHINESE_FIELD) is None
