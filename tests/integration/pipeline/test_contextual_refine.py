"""Contextual vectors, the refiner side: background refining, its script, claims, reindex."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.vectors import Vectors, vector_bytes
from hindsight_redis.errors import EmbeddingMismatch
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.pipeline.assembly import PipelineSettings, build_pipeline, shared_parts
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.providers.contextual import MODEL_ID, MiniLMEmbedder
from hindsight_redis.providers.embedders import HashEmbedder
from hindsight_redis.providers.multilingual import CHINESE_FIELD, shared_model, unpack
from hindsight_redis.providers.projection import project
from hindsight_redis.redis import scripts
from hindsight_redis.settings import Settings
from tests.integration.helpers import (
    Drain,
    IndexEnv,
    index_fields,
    memory_keys,
    open_index_env,
    write_and_drain,
)

# float16 (the default vector_datatype), projected on 256 of MiniLM's 384 directions
CTX_BYTES = 256 * 2


# ------------------------------------------------------------ worker + refine


async def test_burst_refines_every_memory(
    settings: Settings, redis: Redis, minilm: MiniLMEmbedder, drain: Drain
) -> None:
    assert settings.contextual_embedder == "minilm"  # the default
    settings = settings.model_copy(update={"refine_batch_size": 3})  # several refine steps
    texts = [
        "Alice drinks green tea every morning before standup",
        "The billing-service-v2 deploy failed with ERR_CONN_RESET on the gateway",
        "Account user_42 asked for a refund of the annual plan",
        "Bob prefers espresso coffee after lunch",
        "The quarterly planning offsite moved to the lake house in May",
        "Carol is allergic to peanuts and avoids the bakery downstairs",
        "The staging cluster runs Postgres 16 since the last upgrade",
    ]
    ids, report = await write_and_drain(settings, texts)
    keys = Keys(settings.key_prefix, settings.namespace)
    assert report.indexed == len(texts)
    assert report.refined == report.indexed
    stored = await memory_keys(redis, keys)
    assert stored == sorted(keys.doc(i) for i in ids)
    for key in stored:
        refine, ctx, content = await redis.hmget(key, ["refine", CONTEXT_FIELD, "content"])
        assert refine == b"done"
        assert isinstance(ctx, bytes) and len(ctx) == CTX_BYTES
        vec = np.frombuffer(ctx, dtype=np.float16).astype(np.float32)
        assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3
        # it is the contextual embedding of the stored text
        expected = project(minilm.embed_sync([as_text(content)]), "pca256")[0]
        np.testing.assert_allclose(vec, expected, atol=1e-3)
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"context_model"] == MODEL_ID.encode() and meta[b"context_dims"] == b"384"
    assert meta[b"context_projection"] == b"pca256"
    info = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).info()
    assert info is not None and info.has_context and info.context_model == MODEL_ID
    assert not [k async for k in redis.scan_iter(match=keys.refine_claim("*"))]
    # nothing left to do: a second burst refines nothing
    assert (await drain(settings)).refined == 0


async def test_new_memories_start_pending(
    client: AsyncMemoryClient, settings: Settings, redis: Redis, drain: Drain
) -> None:
    keys = client.keys
    await client.write("Dave keeps the spare office keys in the top drawer")
    groups = PipelineSettings(
        settings.worker, settings.dedup, settings.index, settings.search, settings.embedding
    )
    shared = shared_parts(settings.embedding, settings.filters, settings.llm)
    built = await build_pipeline(redis, keys, groups, shared)  # what a MiniLM worker would run
    assert built.refiner is not None
    assert await built.refiner.pending(10) == []  # nothing committed yet
    # a worker without the contextual embedder commits but never refines
    await drain(settings.model_copy(update={"contextual_embedder": "none"}))
    [key] = await memory_keys(redis, keys)
    assert await redis.hget(key, "refine") == b"pending"
    assert not await redis.hexists(key, CONTEXT_FIELD)
    pending = await built.refiner.pending(10)
    assert [p.key for p in pending] == [key]
    assert pending[0].content == "Dave keeps the spare office keys in the top drawer"
    assert pending[0].text == pending[0].content  # written without a context


async def test_stats_refine_pending_is_none_without_an_index(client: AsyncMemoryClient) -> None:
    assert (await client.stats())["refine_pending"] is None


async def test_stats_count_pending_memories(client: AsyncMemoryClient, settings: Settings) -> None:
    await client.search("anything", top_k=1)  # the index, with its contextual field
    texts = ["Olga books the meeting rooms", "Pete signs off the budget"]
    # committed by a worker without the model: they wait for one that has it
    await write_and_drain(settings.model_copy(update={"contextual_embedder": "none"}), texts)
    assert (await client.stats())["refine_pending"] == 2


async def test_without_a_contextual_model_nothing_waits_for_one(settings: Settings) -> None:
    plain = settings.model_copy(update={"contextual_embedder": "none"})
    texts = ["Olga books the meeting rooms", "Pete signs off the budget"]
    await write_and_drain(plain, texts)
    async with AsyncMemoryClient(plain) as client:
        assert (await client.stats())["refine_pending"] == 0


class _Meddle:
    """Stage that changes the index record mid-run (after the worker's ensure)."""

    name = "meddle"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    async def process(self, batch: Sequence[Candidate]) -> None:
        await self.redis.hset(self.keys.index_meta, "context_model", "other-model")


async def test_a_failing_refiner_never_stops_ingest(
    client: AsyncMemoryClient, redis: Redis, drain: Drain
) -> None:
    keys = client.keys
    texts = ["Erin maintains the release calendar", "Frank owns the on-call rotation"]
    await client.write_many([{"content": t} for t in texts])
    report = await drain(extra_stages=[_Meddle(redis, keys)])
    assert report.indexed == 2 and report.refined == 0 and report.failed == 0
    stored = await memory_keys(redis, keys)
    assert len(stored) == 2
    for key in stored:
        assert await redis.hget(key, "refine") == b"pending"
        assert not await redis.hexists(key, CONTEXT_FIELD)
    assert not [k async for k in redis.scan_iter(match=keys.refine_claim("*"))]


# ------------------------------------------------------------ Refiner directly


Env = IndexEnv


@pytest.fixture
async def env(settings: Settings, redis: Redis, minilm: MiniLMEmbedder) -> Env:
    env = await open_index_env(redis, settings, minilm)
    assert env.info.has_context and env.info.context_model == MODEL_ID
    return env


class _Interfering:
    """The contextual embedder, running ``before`` first (a race, made certain)."""

    def __init__(self, inner: MiniLMEmbedder, before: Callable[[], Awaitable[object]]) -> None:
        self.inner = inner
        self.before = before
        self.seen: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dims(self) -> int:
        return self.inner.dims

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen.append(list(texts))
        await self.before()
        return await self.inner.embed(texts)


async def test_refiner_skips_deleted_and_changed_memories(env: Env, minilm: MiniLMEmbedder) -> None:
    await env.put("gone", "Gina left the team in March")
    await env.put("edited", "Hank drives a red bicycle to work")
    await env.put("kept", "Ivan bakes sourdough bread on Sundays")
    await env.indexed(3)
    k = env.keys

    async def interfere() -> None:
        await env.redis.delete(k.doc("gone"))
        await env.redis.hset(k.doc("edited"), "content", "Hank now drives a blue car to work")

    embedder = _Interfering(minilm, interfere)
    refiner = Refiner(env.redis, k, embedder)  # type: ignore[arg-type]
    assert await refiner.refine_once() == 1
    assert sorted(embedder.seen[0]) == sorted(
        [
            "Gina left the team in March",
            "Hank drives a red bicycle to work",
            "Ivan bakes sourdough bread on Sundays",
        ]
    )
    assert not await env.redis.exists(k.doc("gone"))  # no hash recreated
    assert await env.redis.hmget(k.doc("edited"), ["refine", CONTEXT_FIELD]) == [b"pending", None]
    assert await env.redis.hget(k.doc("kept"), "refine") == b"done"
    for memory_id in ("gone", "edited", "kept"):
        assert not await env.redis.exists(k.refine_claim(memory_id))  # claims released
    # the next step embeds the edited text, the one stored now
    assert await Refiner(env.redis, k, minilm).refine_once() == 1
    refine, ctx = await env.redis.hmget(k.doc("edited"), ["refine", CONTEXT_FIELD])
    assert refine == b"done" and isinstance(ctx, bytes)
    expected = project(minilm.embed_sync(["Hank now drives a blue car to work"]), "pca256")[0]
    np.testing.assert_allclose(np.frombuffer(ctx, dtype=np.float16), expected, atol=1e-3)
    assert await Refiner(env.redis, k, minilm).refine_once() == 0  # nothing pending
    assert not await env.redis.exists(k.doc("gone"))


async def test_refine_script_results(env: Env, minilm: MiniLMEmbedder) -> None:
    await env.put("m", "Judy waters the office plants on Mondays")
    vec = vector_bytes(
        project(minilm.embed_sync(["Judy waters the office plants on Mondays"]), "pca256")[0],
        "float16",
    )
    k = env.keys

    async def run(key: str, content: str, model: str = MODEL_ID, state: str = "done") -> int:
        return await scripts.refine(
            env.redis,
            memory=key,
            index_meta=k.index_meta,
            content=content,
            field=CONTEXT_FIELD,
            vector=vec,
            model=model,
            state=state,
        )

    assert await run(k.doc("absent"), "Judy waters the office plants on Mondays") == 0
    assert not await env.redis.exists(k.doc("absent"))
    assert await run(k.doc("m"), "some other text") == 0
    assert await env.redis.hget(k.doc("m"), "refine") == b"pending"
    assert await run(k.doc("m"), "Judy waters the office plants on Mondays", "other") == -1
    assert not await env.redis.hexists(k.doc("m"), CONTEXT_FIELD)
    judy = "Judy waters the office plants on Mondays"
    assert await run(k.doc("m"), judy, state="draft") == 1
    assert await env.redis.hmget(k.doc("m"), ["refine", CONTEXT_FIELD]) == [b"draft", vec]
    # a second refiner that found it pending too: not stored, not counted again
    assert await run(k.doc("m"), judy, state="draft") == 0
    assert await run(k.doc("m"), judy) == 1  # the exact vector replaces the draft
    assert await env.redis.hmget(k.doc("m"), ["refine", CONTEXT_FIELD]) == [b"done", vec]
    assert await run(k.doc("m"), judy, state="draft") == 0  # never back to a draft
    assert await env.redis.hget(k.doc("m"), "refine") == b"done"


async def test_refiner_refuses_another_contextual_model(env: Env, minilm: MiniLMEmbedder) -> None:
    await env.put("m1", "Karl keeps a spare laptop charger at his desk")
    await env.put("m2", "Lena runs the Thursday design review")
    await env.indexed(2)
    await env.redis.hset(env.keys.index_meta, "context_model", "other")
    with pytest.raises(EmbeddingMismatch):
        await Refiner(env.redis, env.keys, minilm).refine_once()
    for memory_id in ("m1", "m2"):
        key = env.keys.doc(memory_id)
        assert await env.redis.hmget(key, ["refine", CONTEXT_FIELD]) == [b"pending", None]
        assert not await env.redis.exists(env.keys.refine_claim(memory_id))


async def test_refiner_claims_keep_two_refiners_apart(env: Env, minilm: MiniLMEmbedder) -> None:
    for i in range(5):
        await env.put(f"m{i}", f"Note {i}: the {['red', 'blue', 'green', 'gold', 'grey'][i]} door")
    await env.indexed(5)
    # another refiner holds m0 and m1
    for memory_id in ("m0", "m1"):
        await env.redis.set(env.keys.refine_claim(memory_id), "1", px=60_000)
    refiner = Refiner(env.redis, env.keys, minilm, batch_size=2)
    assert await refiner.refine_once() == 2
    assert await refiner.refine_once() == 1
    assert await refiner.refine_once() == 0  # m0, m1 pending but claimed elsewhere
    states = {i: await env.redis.hget(env.keys.doc(f"m{i}"), "refine") for i in range(5)}
    assert states == {0: b"pending", 1: b"pending", 2: b"done", 3: b"done", 4: b"done"}
    # the surplus a refiner won beyond its batch was released: only the foreign claims remain
    left = sorted([as_text(x) async for x in env.redis.scan_iter(match=env.keys.refine_claim("*"))])
    assert left == sorted([env.keys.refine_claim("m0"), env.keys.refine_claim("m1")])


# ------------------------------------------------------------ index lifecycle


class _OtherContextual(MiniLMEmbedder):
    @property
    def model_id(self) -> str:
        return "onnx:some-other-model"


async def test_ensure_refuses_another_contextual_model(settings: Settings, redis: Redis) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    index = MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding)
    info = await index.ensure(HashEmbedder(), MiniLMEmbedder())
    with pytest.raises(EmbeddingMismatch, match="some-other-model"):
        await index.ensure(HashEmbedder(), _OtherContextual())
    assert await index.ensure(HashEmbedder()) == info  # no contextual embedder: fine
    assert await index.ensure(HashEmbedder(), MiniLMEmbedder()) == info


async def test_reindex_keeps_or_drops_contextual_vectors(env: Env, minilm: MiniLMEmbedder) -> None:
    await env.put("m1", "Mona sets up the projector before the all-hands")
    await env.put("m2", "Nils orders lunch for the team on Fridays")
    await env.indexed(2)
    while await Refiner(env.redis, env.keys, minilm).refine_once():
        pass
    index = MemoryIndex(
        env.redis, env.keys, env.settings.index, env.settings.search, env.settings.embedding
    )
    before = await env.redis.hget(env.keys.doc("m1"), CONTEXT_FIELD)
    # same contextual model: the vectors stay, the new index has the field
    same = await index.reindex(HashEmbedder(), minilm)
    assert same.generation == 2 and same.has_context and same.context_model == MODEL_ID
    assert await env.redis.hmget(env.keys.doc("m1"), ["refine", CONTEXT_FIELD]) == [b"done", before]
    assert CONTEXT_FIELD in await index_fields(env.redis, env.keys.index_alias)
    # contextual model dropped: the vectors go, and nothing waits for a refiner
    plain = await index.reindex(HashEmbedder())
    assert plain.generation == 3 and not plain.has_context and plain.context_model == ""
    for memory_id in ("m1", "m2"):
        key = env.keys.doc(memory_id)
        assert await env.redis.hmget(key, ["refine", CONTEXT_FIELD]) == [b"off", None]
    assert CONTEXT_FIELD not in await index_fields(env.redis, env.keys.index_alias)
    assert await Refiner(env.redis, env.keys, minilm).refine_once() == 0
    # back to MiniLM: refiners fill the vectors in again
    back = await index.reindex(HashEmbedder(), minilm)
    assert back.has_context and back.context_model == MODEL_ID
    done = 0
    while step := await Refiner(env.redis, env.keys, minilm).refine_once():
        done += step
    assert done == 2
    assert await env.redis.hget(env.keys.doc("m2"), "refine") == b"done"


async def test_chinese_memories_get_the_multilingual_vector(
    env: Env, minilm: MiniLMEmbedder
) -> None:
    chinese = "我们把数据库迁移到了新的服务器"
    await env.put("zh", chinese)
    await env.put("en", "Mona sets up the projector before the all-hands")
    await env.indexed(2)
    zh = env.keys.doc("zh")
    # a refiner without the multilingual model refines the English memory only
    assert await Refiner(env.redis, env.keys, minilm).refine_once() == 1
    assert await Refiner(env.redis, env.keys, minilm).refine_once() == 0
    assert await env.redis.hget(zh, "refine") == b"chinese"
    refiner = Refiner(env.redis, env.keys, minilm, multilingual=shared_model())
    assert await refiner.refine_once() == 1
    state, context, stored = await env.redis.hmget(zh, ["refine", CONTEXT_FIELD, CHINESE_FIELD])
    assert (state, context) == (b"done", None)
    assert unpack(chinese, stored) is not None
    assert await refiner.refine_once() == 0
    # made pending again (a new contextual model): still the multilingual vector, not MiniLM's
    await env.redis.hset(zh, "refine", "pending")
    await env.redis.hdel(zh, CHINESE_FIELD)
    assert await refiner.refine_once() == 1
    state, context, stored = await env.redis.hmget(zh, ["refine", CONTEXT_FIELD, CHINESE_FIELD])
    assert (state, context) == (b"done", None) and unpack(chinese, stored) is not None
