"""A write's ``context``: in the contextual vector only, kept for ``get()``, reindex and export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, MemoryClient
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.providers.contextual import MiniLMEmbedder
from hindsight_redis.providers.embedders import HashEmbedder, embedder_from_settings
from hindsight_redis.providers.projection import project
from hindsight_redis.settings import Settings
from tests.integration.helpers import Drain

QUESTION = "Which flavour of gelato did Priya order at the harbour kiosk?"
ANSWER = "She picked pistachio with a scoop of dark chocolate on top"
TRANSCRIPT = [
    ("s1", "Priya walked along the harbour promenade looking for the gelato kiosk"),
    ("s2", "Tomas booked the train to Lisbon for the conference next month"),
    ("s1", "The kiosk owner offered Priya a taste of the seasonal flavours first"),
    ("s1", "She picked pistachio with a scoop of dark chocolate on top"),
    ("s2", "He reserved a window seat in the quiet carriage of the night train"),
    ("s1", "Priya paid in cash and sat on the bench watching the ferries"),
]


async def _vector(redis: Redis, key: str) -> np.ndarray:
    raw = await redis.hget(key, CONTEXT_FIELD)
    assert isinstance(raw, bytes)
    return np.frombuffer(raw, dtype=np.float16).astype(np.float32)


async def test_the_context_goes_into_the_contextual_vector_only(
    client: AsyncMemoryClient,
    settings: Settings,
    redis: Redis,
    drain: Drain,
    minilm: MiniLMEmbedder,
) -> None:
    receipt = await client.write(ANSWER, context=QUESTION, session_id="s1")
    report = await drain()
    assert report.indexed == 1 and report.refined == 1
    key = client.keys.doc(receipt.id)
    expected = project(minilm.embed_sync([f"{ANSWER} {QUESTION}"]), "pca256")[0]
    np.testing.assert_allclose(await _vector(redis, key), expected, atol=1e-3)
    own = project(minilm.embed_sync([ANSWER]), "pca256")[0]
    assert not np.allclose(await _vector(redis, key), own, atol=1e-2)  # not the text alone
    # the static vector reads the content alone
    info = await MemoryIndex(
        redis, client.keys, settings.index, settings.search, settings.embedding
    ).info()
    assert info is not None
    static = await redis.hget(key, info.vector_field)
    [vector] = embedder_from_settings(settings.embedding).embed_sync([ANSWER])
    assert isinstance(static, bytes)
    np.testing.assert_allclose(
        np.frombuffer(static, dtype=info.datatype).astype(np.float32), vector, atol=1e-3
    )
    # and so does BM25: a word only in the context finds nothing, one in the content does
    assert await client.search("gelato", mode="keyword") == []
    assert [h.id for h in await client.search("pistachio", mode="keyword")] == [receipt.id]
    record = await client.get(receipt.id)
    assert record is not None and record.context == QUESTION and record.content == ANSWER


async def test_a_reindex_embeds_the_same_context_again(
    client: AsyncMemoryClient,
    settings: Settings,
    redis: Redis,
    drain: Drain,
    minilm: MiniLMEmbedder,
) -> None:
    receipt = await client.write(ANSWER, context=QUESTION)
    await drain()
    key = client.keys.doc(receipt.id)
    before = await _vector(redis, key)
    index = MemoryIndex(redis, client.keys, settings.index, settings.search, settings.embedding)
    await index.reindex(HashEmbedder())  # the contextual vectors go
    assert not await redis.hexists(key, CONTEXT_FIELD)
    await index.reindex(HashEmbedder(), minilm)  # and are recomputed by refiners
    assert await Refiner(redis, client.keys, minilm).refine_once() == 1
    np.testing.assert_allclose(await _vector(redis, key), before, atol=1e-3)


async def test_write_many_fills_contexts_per_session_across_calls(
    client: AsyncMemoryClient, redis: Redis, drain: Drain, minilm: MiniLMEmbedder
) -> None:
    items = [{"content": text, "session_id": session} for session, text in TRANSCRIPT]
    items.append({"content": "Nobody remembers which ferry left first that evening"})
    first = await client.write_many(items[:3], context_from_previous=2)
    rest = await client.write_many(items[3:], context_from_previous=2)  # a batch boundary
    report = await drain()
    assert report.indexed == len(items)
    records = [await client.get(r.id) for r in first + rest]
    texts = [text for _, text in TRANSCRIPT]
    assert [r.context if r else "missing" for r in records] == [
        None,
        None,
        texts[0],
        f"{texts[0]} {texts[2]}",
        texts[1],
        f"{texts[2]} {texts[3]}",
        None,  # no session_id: no automatic context
    ]
    for receipt, record in zip(first + rest, records, strict=True):
        assert record is not None
        text = f"{record.content} {record.context}" if record.context else record.content
        expected = project(minilm.embed_sync([text]), "pca256")[0]
        np.testing.assert_allclose(
            await _vector(redis, client.keys.doc(receipt.id)), expected, atol=1e-3
        )
    # without the option nothing is filled, and an item's own context wins
    plain = await client.write_many(
        [
            {"content": "Tomas packed a paperback for the long ride", "session_id": "s2"},
            {
                "content": "Priya kept the kiosk's receipt as a bookmark",
                "session_id": "s1",
                "context": "At home she opened her novel",
            },
        ],
    )
    own = await client.write_many(
        [
            {
                "content": "The night train reached Lisbon at dawn",
                "session_id": "s2",
                "context": "Tomas slept through Spain",
            }
        ],
        context_from_previous=2,
    )
    await drain()
    contexts = [(await client.get(r.id)) for r in plain + own]
    assert [c.context if c else "missing" for c in contexts] == [
        None,
        "At home she opened her novel",
        "Tomas slept through Spain",
    ]


def test_the_sync_client_writes_a_context(sync_client: MemoryClient, drain: Drain) -> None:
    import asyncio

    receipt = sync_client.write(ANSWER, context=QUESTION)
    items = [{"content": text, "session_id": session} for session, text in TRANSCRIPT[0:3:2]]
    _, second = sync_client.write_many(items, context_from_previous=1)
    asyncio.run(drain())
    record = sync_client.get(receipt.id)
    assert record is not None and record.context == QUESTION
    later = sync_client.get(second.id)
    assert later is not None and later.context == TRANSCRIPT[0][1]


async def test_export_and_import_keep_the_context(
    client: AsyncMemoryClient, redis: Redis, drain: Drain, tmp_path: Path
) -> None:
    receipt = await client.write(ANSWER, context=QUESTION)
    await drain()
    await client.forget(receipt.id)
    key = client.keys.doc(receipt.id)
    before = await redis.hgetall(key)
    assert before[b"context"] == QUESTION.encode()
    path = tmp_path / "cold.jsonl.gz"
    assert (await client.export(path)).count == 1
    assert (await client.purge_exported(path)).removed == 1
    assert not await redis.exists(key)
    assert (await client.import_file(path)).imported == 1
    assert await redis.hgetall(key) == before
    record = await client.get(receipt.id)
    assert record is not None and record.context == QUESTION
