"""Vector datatypes on a real Redis: float16 indexes end to end, float32 ones kept working.

A new index stores its vectors as float16 (``Settings.vector_datatype``);
an index built by an earlier release (FLOAT32 fields, a record naming no
datatype) keeps float32 for everything written to it or asked of it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from redis.asyncio import Redis
from redis.commands.search.index_definition import IndexDefinition, IndexType

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.documents import memory_document
from hindsight_redis.core.fields import CONTEXT_FIELD, DEFAULT_LANGUAGE, LANGUAGE_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.index.schema import index_schema
from hindsight_redis.providers.contextual import MiniLMEmbedder
from hindsight_redis.providers.embedders import HashEmbedder
from tests.integration.helpers import Drain

FACTS = [
    "Alice waters the office plants every Monday morning",
    "The billing service moved to the Frankfurt region in March",
    "Bob prefers answers in Chinese with short summaries",
    "The nightly backup of the staging database starts at 02:00 UTC",
]


async def field_types(redis: Redis, index: str) -> dict[str, str]:
    """Each vector field's ``data_type`` from ``FT.INFO``."""
    info: dict[Any, Any] = await redis.ft(index).info()  # type: ignore[no-untyped-call]
    found = {}
    for attribute in info["attributes"]:
        items = [x.decode() if isinstance(x, bytes) else x for x in attribute]
        if "data_type" in items:
            found[items[items.index("attribute") + 1]] = items[items.index("data_type") + 1]
    return found


async def failures(redis: Redis, index: str) -> int:
    info: dict[Any, Any] = await redis.ft(index).info()  # type: ignore[no-untyped-call]
    return int(info["hash_indexing_failures"])


async def test_a_float16_index_round_trips_write_search_export_import(
    client: AsyncMemoryClient, drain: Drain, redis: Redis, settings: Settings, tmp_path: Path
) -> None:
    receipts = await client.write_many([{"content": fact} for fact in FACTS])
    await drain()
    info = await MemoryIndex(
        redis, client.keys, settings.index, settings.search, settings.embedding
    ).info()
    assert info is not None and (info.datatype, info.context_datatype) == ("float16", "float16")
    assert await field_types(redis, info.name) == {"vec_g1": "FLOAT16", CONTEXT_FIELD: "FLOAT16"}
    stored = await redis.hgetall(client.keys.doc(receipts[1].id))
    assert len(stored[b"vec_g1"]) == 2 * info.dims and len(stored[CONTEXT_FIELD.encode()]) == 512
    # the embedded server keeps such a hash one listpack (hash-max-listpack-value 1024)
    assert await redis.object("encoding", client.keys.doc(receipts[1].id)) == b"listpack"
    for mode in ("vector", "hybrid"):
        hits = await client.search("billing service Frankfurt region", top_k=2, mode=mode)
        assert hits[0].id == receipts[1].id and hits[0].vector is not None

    path = tmp_path / "f16.jsonl.gz"
    assert (await client.export(path, status="active")).count == len(FACTS)
    wide = settings.model_copy(update={"namespace": "wide", "vector_datatype": "float32"})
    async with AsyncMemoryClient(wide) as other:
        report = await other.import_file(path)
        assert (report.imported, report.reembedded) == (len(FACTS), 0)  # converted, not embedded
        moved = await redis.hgetall(other.keys.doc(receipts[1].id))
        assert len(moved[b"vec_g1"]) == 4 * info.dims
        assert len(moved[CONTEXT_FIELD.encode()]) == 4 * 256  # projected, as stored
        np.testing.assert_array_equal(
            np.frombuffer(moved[b"vec_g1"], "<f4"), np.frombuffer(stored[b"vec_g1"], "<f2")
        )
        hits = await other.search("billing service Frankfurt region", top_k=2)
        assert hits[0].id == receipts[1].id and hits[0].contextual is not None
        assert await failures(redis, other.keys.index_alias) == 0
    same = settings.model_copy(update={"namespace": "copy"})
    async with AsyncMemoryClient(same) as copy:
        assert (await copy.import_file(path)).imported == len(FACTS)
        copied = await redis.hgetall(copy.keys.doc(receipts[1].id))
        assert copied[b"vec_g1"] == stored[b"vec_g1"]  # same datatype: the bytes as stored
        assert copied[CONTEXT_FIELD.encode()] == stored[CONTEXT_FIELD.encode()]


async def build_the_old_way(
    redis: Redis, keys: Keys, embedder: HashEmbedder, minilm: MiniLMEmbedder
) -> None:
    """An index and memories as releases before vector datatypes wrote them: a record
    without datatypes, FLOAT32 fields, float32 vectors in the hashes."""
    await redis.hset(
        keys.index_meta,
        mapping={
            "generation": "1",
            "name": keys.index_name(1),
            "vector_field": "vec_g1",
            "model_id": embedder.model_id,
            "dims": str(embedder.dims),
            "context_model": minilm.model_id,
            "context_dims": str(minilm.dims),
        },
    )
    schema = index_schema(
        keys,
        generation=1,
        dims=embedder.dims,
        context_dims=minilm.dims,
        datatype="float32",
        context_datatype="float32",
    )
    definition = IndexDefinition(  # type: ignore[no-untyped-call]
        prefix=[keys.doc_prefix],
        index_type=IndexType.HASH,
        language_field=LANGUAGE_FIELD,
        language=DEFAULT_LANGUAGE,
    )
    await redis.ft(keys.index_name(1)).create_index(
        fields=schema.redis_fields, definition=definition
    )
    await redis.execute_command("FT.ALIASADD", keys.index_alias, keys.index_name(1))  # type: ignore[no-untyped-call]
    vectors, contexts = await embedder.embed(FACTS), await minilm.embed(FACTS)
    for i, (fact, vector, context) in enumerate(zip(FACTS, vectors, contexts, strict=True)):
        event = MemoryEvent(
            event_id=f"old{i}", namespace=keys.namespace, content=fact, created_at=time.time()
        )
        doc = memory_document(
            event,
            content=fact,
            vector_field="vec_g1",
            vector_datatype="float32",
            embedding=vector,
        )
        doc |= {CONTEXT_FIELD: context.astype(np.float32).tobytes(), "refine": "done"}
        await redis.hset(keys.doc(f"old{i}"), mapping=doc)  # type: ignore[arg-type]
    defaults = Settings()
    index = MemoryIndex(redis, keys, defaults.index, defaults.search, defaults.embedding)
    await index.wait_indexed(keys.index_name(1))


async def test_an_index_built_with_float32_keeps_working_after_the_upgrade(
    drain: Drain, redis: Redis, settings: Settings, minilm: MiniLMEmbedder
) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = HashEmbedder()
    await build_the_old_way(redis, keys, embedder, minilm)
    assert settings.vector_datatype == "float16"  # what the upgraded code would create
    async with AsyncMemoryClient(settings) as client:
        hits = await client.search("billing service Frankfurt region", top_k=2)
        assert hits[0].id == "old1" and hits[0].contextual is not None
        receipt = await client.write("Carol moved the standup to 10:15 on Thursdays")
        await drain()
        hits = await client.search("standup Thursdays Carol", top_k=1)
        assert hits and hits[0].id == receipt.id and hits[0].contextual is not None
    new = await redis.hgetall(keys.doc(receipt.id))  # written as the index reads it
    assert len(new[b"vec_g1"]) == 4 * embedder.dims and len(new[CONTEXT_FIELD.encode()]) == 1536
    assert await failures(redis, keys.index_alias) == 0

    info = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).reindex(embedder, minilm)
    assert (info.datatype, info.context_datatype) == ("float16", "float32")  # vectors kept
    assert await field_types(redis, info.name) == {"vec_g2": "FLOAT16", CONTEXT_FIELD: "FLOAT32"}
    async with AsyncMemoryClient(settings) as client:
        hits = await client.search("billing service Frankfurt region", top_k=2)
        assert hits[0].id == "old1" and hits[0].contextual is not None
        assert len(await redis.hget(keys.doc("old1"), "vec_g2") or b"") == 2 * embedder.dims
    assert await failures(redis, keys.index_alias) == 0
