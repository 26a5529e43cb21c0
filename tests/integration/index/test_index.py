"""Index lifecycle: creation, embedding mismatch, reindex with an alias swap."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.errors import EmbeddingMismatch
from hindsight_redis.index.manager import IndexInfo, MemoryIndex
from hindsight_redis.pipeline.commit import doc_from_candidate
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.providers.embedders import Embedder, HashEmbedder
from hindsight_redis.search.searcher import Searcher
from hindsight_redis.settings import Settings
from tests.integration.helpers import Drain, wait_for


class RenamedEmbedder(HashEmbedder):
    """The hash embedder under another model id (same dims)."""

    @property
    def model_id(self) -> str:
        return "other-model"


async def _put(redis: Redis, keys: Keys, info: IndexInfo, embedder: Embedder, n: int) -> None:
    texts = [f"note {i} about project falcon milestone {i}" for i in range(n)]
    vectors = await embedder.embed(texts)
    async with redis.pipeline(transaction=False) as pipe:
        for i, (content, vec) in enumerate(zip(texts, vectors, strict=True)):
            event = MemoryEvent(
                event_id=f"m{i}", namespace=keys.namespace, content=content, created_at=time.time()
            )
            doc = doc_from_candidate(
                Candidate("0-0", event, content, embedding=vec),
                vector_field=info.vector_field,
                vector_datatype=info.datatype,
            )
            pipe.hset(keys.doc(f"m{i}"), mapping=doc)  # type: ignore[arg-type]
        await pipe.execute()


async def test_ensure_creates_index_alias_and_record(redis: Redis, settings: Settings) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    index = MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding)
    info = await index.ensure(HashEmbedder())
    assert info.generation == 1 and info.vector_field == "vec_g1" and info.dims == 256
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"model_id"] == b"hash:v1-256" and meta[b"dims"] == b"256"
    assert await index.ensure(HashEmbedder()) == info  # idempotent
    health = await index.health()
    assert health["exists"] and health["num_docs"] == 0 and health["model_id"] == info.model_id


async def test_concurrent_ensure_records_one_index(redis: Redis, settings: Settings) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    infos = await asyncio.gather(
        *(
            MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding).ensure(
                HashEmbedder()
            )
            for _ in range(5)
        )
    )
    assert len(set(infos)) == 1


async def test_other_dimension_raises_mismatch(redis: Redis, settings: Settings) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    await MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding).ensure(
        HashEmbedder()
    )
    with pytest.raises(EmbeddingMismatch) as caught:
        await MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding).ensure(
            HashEmbedder(dims=64)
        )
    message = str(caught.value)
    assert "256 dims" in message and "64 dims" in message
    assert "hindsight-redis reindex --embedder" in message


async def test_other_model_raises_mismatch(redis: Redis, settings: Settings) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    await MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding).ensure(
        HashEmbedder()
    )
    with pytest.raises(EmbeddingMismatch, match="other-model"):
        await MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding).ensure(
            RenamedEmbedder()
        )


async def test_reindex_swaps_alias_and_search_keeps_working(
    redis: Redis, settings: Settings
) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    index = MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding)
    old_embedder, new_embedder = HashEmbedder(), HashEmbedder(dims=64)
    old = await index.ensure(old_embedder)
    await _put(redis, keys, old, old_embedder, 300)

    async def all_indexed() -> bool:
        return int((await redis.ft(keys.index_alias).info())["num_docs"]) == 300

    await wait_for(all_indexed)
    stop = asyncio.Event()
    answered: list[int] = []

    async def keep_searching() -> None:
        while not stop.is_set():
            try:
                hits = await Searcher(redis, keys, settings.search, old_embedder, old).search(
                    "falcon milestone 7", record_access=False
                )
            except EmbeddingMismatch:
                return  # the alias moved: this client must switch embedders
            answered.append(len(hits))
            await asyncio.sleep(0)  # not a wait: lets the reindex run between searches

    searcher = asyncio.create_task(keep_searching())
    new = await index.reindex(new_embedder)
    stop.set()
    await searcher
    assert answered and all(n == 5 for n in answered)
    assert new.generation == 2 and new.vector_field == "vec_g2" and new.dims == 64
    assert new.model_id == new_embedder.model_id
    with pytest.raises(EmbeddingMismatch):
        await index.ensure(old_embedder)
    assert await index.ensure(new_embedder) == new
    hits = await Searcher(redis, keys, settings.search, new_embedder, new).search(
        "falcon milestone 7"
    )
    assert hits[0].id == "m7"
    names = [n.decode() for n in await redis.execute_command("FT._LIST")]
    assert new.name in names and old.name not in names
    assert await redis.hexists(keys.doc("m7"), "vec_g2")
    assert not await redis.hexists(keys.doc("m7"), "vec_g1")
    assert int((await redis.ft(keys.index_alias).info())["num_docs"]) == 300


async def test_a_client_keeps_searching_across_a_reindex(settings: Settings, drain: Drain) -> None:
    from hindsight_redis import AsyncMemoryClient

    local = settings.model_copy(update={"embedder": "local"})
    async with AsyncMemoryClient(local) as client:
        receipt = await client.write("The billing-service-v2 deploy failed with ERR_CONN_RESET")
        await drain(local)
        assert [h.id for h in await client.search("ERR_CONN_RESET", top_k=1)] == [receipt.id]
        async with AsyncMemoryClient(local) as operator:
            moved = await operator.reindex("local")  # same model, new generation
        assert moved["generation"] == 2
        # the first client's cached index is stale; it re-opens once and goes on
        assert [h.id for h in await client.search("ERR_CONN_RESET", top_k=1)] == [receipt.id]


async def test_an_index_named_before_0_2_is_found_and_renamed_by_the_next_reindex(
    redis: Redis, settings: Settings, drain: Drain, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hindsight_redis import AsyncMemoryClient
    from hindsight_redis.ops.admin import delete_namespace

    keys = Keys(settings.key_prefix, settings.namespace)
    legacy = f"{keys.legacy_index_alias}-g1"
    with monkeypatch.context() as old_release:  # names without the hash tag, as before 0.2
        old_release.setattr(Keys, "index_alias", property(lambda k: k.legacy_index_alias))
        old_release.setattr(Keys, "index_name", lambda k, g: f"{k.legacy_index_alias}-g{g}")
        async with AsyncMemoryClient(settings) as client:
            await client.write_many(
                [{"content": f"Old release fact {n} about kestrel"} for n in range(3)]
            )
            await drain()
    async with AsyncMemoryClient(settings) as client:  # this release
        hits = await client.search("kestrel old release fact", top_k=5, mode="keyword")
        assert len(hits) == 3  # found: the new alias points at the old index, nothing rebuilt
        assert (await client.stats())["memories"]["active"] == 3
    names = {n.decode() for n in await redis.execute_command("FT._LIST")}
    assert legacy in names and keys.index_name(1) not in names
    info = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).reindex(HashEmbedder())
    assert info.name == keys.index_name(2)  # the next reindex moves it to the new name
    names = {n.decode() for n in await redis.execute_command("FT._LIST")}
    assert keys.index_name(2) in names and legacy not in names
    async with AsyncMemoryClient(settings) as client:
        assert len(await client.search("kestrel old release fact", top_k=5, mode="keyword")) == 3
    await delete_namespace(redis, keys)
    assert not {n.decode() for n in await redis.execute_command("FT._LIST")} & {legacy, info.name}
