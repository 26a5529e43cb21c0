"""Contextual vectors against the real embedded Redis: refine, the third search leg, reindex."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Worker, scripts
from hindsight_redis.codec import as_text
from hindsight_redis.errors import EmbeddingError, EmbeddingMismatch
from hindsight_redis.index import MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.pipeline.assembly import build_pipeline
from hindsight_redis.pipeline.base import Candidate
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.providers.contextual import MODEL_ID, MiniLMEmbedder
from hindsight_redis.providers.embedders import HashEmbedder
from hindsight_redis.providers.vectors import Vectors
from hindsight_redis.schema import CONTEXT_FIELD
from hindsight_redis.settings import Settings
from tests.integration.helpers import IndexEnv, open_index_env

CTX_BYTES = 384 * 4

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


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
async def redis(settings: Settings) -> AsyncIterator[Redis]:
    client = Redis.from_url(settings.redis_url or "")
    yield client
    await client.aclose()


async def _memory_keys(redis: Redis, keys: Keys) -> list[str]:
    return sorted([as_text(k) async for k in redis.scan_iter(match=keys.doc_prefix + "*")])


async def _write_and_work(settings: Settings, texts: Sequence[str]) -> tuple[list[str], Any]:
    async with AsyncMemoryClient(settings) as client:
        receipts = await client.write_many([{"content": t} for t in texts])
    report = await Worker(settings).run_async(burst=True)
    return [r.id for r in receipts], report


async def _ft_info(redis: Redis, index: str) -> dict[Any, Any]:
    info: dict[Any, Any] = await redis.ft(index).info()  # type: ignore[no-untyped-call]
    return info


def _attribute_names(ft_info: dict[Any, Any]) -> set[str]:
    """Field names in ``FT.INFO`` attributes (RESP2 lists of key/value pairs)."""
    names: set[str] = set()
    for attribute in ft_info["attributes"]:
        items = [as_text(x) if isinstance(x, bytes | str) else x for x in attribute]
        for i, item in enumerate(items[:-1]):
            if item == "attribute":
                names.add(str(items[i + 1]))
    return names


# ------------------------------------------------------------ worker + refine


async def test_burst_refines_every_memory(
    settings: Settings, redis: Redis, minilm: MiniLMEmbedder
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
    ids, report = await _write_and_work(settings, texts)
    keys = Keys(settings.key_prefix, settings.namespace)
    assert report.indexed == len(texts)
    assert report.refined == report.indexed
    memory_keys = await _memory_keys(redis, keys)
    assert memory_keys == sorted(keys.doc(i) for i in ids)
    for key in memory_keys:
        refine, ctx, content = await redis.hmget(key, ["refine", CONTEXT_FIELD, "content"])
        assert refine == b"done"
        assert isinstance(ctx, bytes) and len(ctx) == CTX_BYTES
        vec = np.frombuffer(ctx, dtype=np.float32)
        assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4
        # it is the contextual embedding of the stored text
        expected = minilm.embed_sync([as_text(content)])[0]
        np.testing.assert_allclose(vec, expected, atol=1e-4)
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"context_model"] == MODEL_ID.encode() and meta[b"context_dims"] == b"384"
    info = await MemoryIndex(redis, keys, settings).info()
    assert info is not None and info.has_context and info.context_model == MODEL_ID
    assert not [k async for k in redis.scan_iter(match=keys.refine_claim("*"))]
    # nothing left to do: a second burst refines nothing
    assert (await Worker(settings).run_async(burst=True)).refined == 0


async def test_new_memories_start_pending(settings: Settings, redis: Redis) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    async with AsyncMemoryClient(settings) as client:
        await client.write("Dave keeps the spare office keys in the top drawer")
    built = await build_pipeline(redis, keys, settings)  # what a MiniLM worker would run
    assert built.refiner is not None
    assert await built.refiner.pending(10) == []  # nothing committed yet
    # a worker without the contextual embedder commits but never refines
    await Worker(settings.model_copy(update={"contextual_embedder": "none"})).run_async(burst=True)
    [key] = await _memory_keys(redis, keys)
    assert await redis.hget(key, "refine") == b"pending"
    assert not await redis.hexists(key, CONTEXT_FIELD)
    pending = await built.refiner.pending(10)
    assert [k for k, _ in pending] == [key]
    assert pending[0][1] == "Dave keeps the spare office keys in the top drawer"


async def test_stats_refine_pending_is_none_without_an_index(settings: Settings) -> None:
    async with AsyncMemoryClient(settings) as client:
        assert (await client.stats())["refine_pending"] is None


async def test_stats_count_pending_memories(settings: Settings) -> None:
    texts = ["Olga books the meeting rooms", "Pete signs off the budget"]
    await _write_and_work(settings.model_copy(update={"contextual_embedder": "none"}), texts)
    async with AsyncMemoryClient(settings) as client:
        assert (await client.stats())["refine_pending"] == 2


class _Meddle:
    """Stage that changes the index record mid-run (after the worker's ensure)."""

    name = "meddle"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    async def process(self, batch: Sequence[Candidate]) -> None:
        await self.redis.hset(self.keys.index_meta, "context_model", "other-model")


async def test_a_failing_refiner_never_stops_ingest(settings: Settings, redis: Redis) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    texts = ["Erin maintains the release calendar", "Frank owns the on-call rotation"]
    async with AsyncMemoryClient(settings) as client:
        await client.write_many([{"content": t} for t in texts])
    report = await Worker(settings, extra_stages=[_Meddle(redis, keys)]).run_async(burst=True)
    assert report.indexed == 2 and report.refined == 0 and report.failed == 0
    memory_keys = await _memory_keys(redis, keys)
    assert len(memory_keys) == 2
    for key in memory_keys:
        assert await redis.hget(key, "refine") == b"pending"
        assert not await redis.hexists(key, CONTEXT_FIELD)
    assert not [k async for k in redis.scan_iter(match=keys.refine_claim("*"))]


# ------------------------------------------------------------ search


async def test_hybrid_hits_carry_the_contextual_cosine(settings: Settings) -> None:
    await _write_and_work(settings, [TARGET, *DISTRACTORS])
    async with AsyncMemoryClient(settings) as client:
        hits = await client.search("database migration on staging", top_k=5)
        assert hits[0].content == DISTRACTORS[1]
        assert len(hits) == 5 and all(h.contextual is not None for h in hits)
        assert all(-1.0 <= (h.contextual or 0.0) <= 1.0001 for h in hits)
        # vector and keyword modes have no contextual leg
        for mode in ("vector", "keyword"):
            found = await client.search("database migration on staging", top_k=3, mode=mode)
            assert found and all(h.contextual is None for h in found)


async def test_contextual_leg_finds_a_paraphrase_sharing_no_word(settings: Settings) -> None:
    ids, _ = await _write_and_work(settings, [TARGET, *DISTRACTORS])
    target_id = ids[0]
    async with AsyncMemoryClient(settings) as client:
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


async def test_chinese_query_skips_the_contextual_leg(settings: Settings) -> None:
    ids, report = await _write_and_work(settings, [CHINESE, *DISTRACTORS])
    # MiniLM reads English only: the Chinese memory is not refined
    assert report.indexed == 5 and report.refined == 4
    async with AsyncMemoryClient(settings) as client:
        key = client.keys.doc(ids[0])
        assert await client.redis.hmget(key, ["refine", CONTEXT_FIELD]) == [b"off", None]
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
    ids, report = await _write_and_work(settings, [TARGET, *DISTRACTORS])
    assert report.indexed == 5 and report.refined == 0
    names = _attribute_names(await _ft_info(redis, keys.index_alias))
    assert CONTEXT_FIELD not in names and "vec_g1" in names and "refine" in names
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"context_model"] == b"" and meta[b"context_dims"] == b"0"
    async with AsyncMemoryClient(settings) as client:
        for mode in ("hybrid", "vector", "keyword"):
            hits = await client.search("database migration staging", top_k=3, mode=mode)
            assert hits[0].id == ids[2]
            assert all(h.contextual is None for h in hits)


async def test_with_contextual_embedder_the_index_has_the_field(
    settings: Settings, redis: Redis
) -> None:
    keys = Keys(settings.key_prefix, settings.namespace)
    async with AsyncMemoryClient(settings) as client:
        await client.search("anything", top_k=1)  # opens (creates) the index
    assert CONTEXT_FIELD in _attribute_names(await _ft_info(redis, keys.index_alias))


async def test_client_reindex_keeps_the_contextual_vectors(
    settings: Settings, redis: Redis
) -> None:
    ids, _ = await _write_and_work(settings, [TARGET, *DISTRACTORS])
    keys = Keys(settings.key_prefix, settings.namespace)
    before = await redis.hget(keys.doc(ids[0]), CONTEXT_FIELD)
    async with AsyncMemoryClient(settings) as client:
        assert (await client.search(PARAPHRASE, top_k=1))[0].id == ids[0]
        moved = await client.reindex("hash")  # same models, new generation
        assert moved["generation"] == 2 and moved["contextual_model"] == MODEL_ID
        assert await redis.hmget(keys.doc(ids[0]), ["refine", CONTEXT_FIELD]) == [b"done", before]
        assert CONTEXT_FIELD in _attribute_names(await _ft_info(redis, keys.index_alias))
        hits = await client.search(PARAPHRASE, top_k=5)
        assert hits[0].id == ids[0] and all(h.contextual is not None for h in hits)
    assert (await Worker(settings).run_async(burst=True)).refined == 0  # nothing to redo


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
        ["Gina left the team in March", "Hank drives a red bicycle to work",
         "Ivan bakes sourdough bread on Sundays"]
    )  # fmt: skip
    assert not await env.redis.exists(k.doc("gone"))  # no hash recreated
    assert await env.redis.hmget(k.doc("edited"), ["refine", CONTEXT_FIELD]) == [b"pending", None]
    assert await env.redis.hget(k.doc("kept"), "refine") == b"done"
    for memory_id in ("gone", "edited", "kept"):
        assert not await env.redis.exists(k.refine_claim(memory_id))  # claims released
    # the next step embeds the edited text, the one stored now
    assert await Refiner(env.redis, k, minilm).refine_once() == 1
    refine, ctx = await env.redis.hmget(k.doc("edited"), ["refine", CONTEXT_FIELD])
    assert refine == b"done" and isinstance(ctx, bytes)
    expected = minilm.embed_sync(["Hank now drives a blue car to work"])[0]
    np.testing.assert_allclose(np.frombuffer(ctx, dtype=np.float32), expected, atol=1e-4)
    assert await Refiner(env.redis, k, minilm).refine_once() == 0  # nothing pending
    assert not await env.redis.exists(k.doc("gone"))


async def test_refine_script_results(env: Env, minilm: MiniLMEmbedder) -> None:
    await env.put("m", "Judy waters the office plants on Mondays")
    script = env.redis.register_script(scripts.REFINE)
    vec = minilm.embed_sync(["Judy waters the office plants on Mondays"])[0].tobytes()
    k = env.keys

    async def run(key: str, content: str, model: str = MODEL_ID) -> int:
        args: list[str | bytes] = [content, CONTEXT_FIELD, vec, model]
        return int(await script(keys=[key, k.index_meta], args=args))

    assert await run(k.doc("absent"), "Judy waters the office plants on Mondays") == 0
    assert not await env.redis.exists(k.doc("absent"))
    assert await run(k.doc("m"), "some other text") == 0
    assert await env.redis.hget(k.doc("m"), "refine") == b"pending"
    assert await run(k.doc("m"), "Judy waters the office plants on Mondays", "other") == -1
    assert not await env.redis.hexists(k.doc("m"), CONTEXT_FIELD)
    assert await run(k.doc("m"), "Judy waters the office plants on Mondays") == 1
    assert await env.redis.hmget(k.doc("m"), ["refine", CONTEXT_FIELD]) == [b"done", vec]


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
    index = MemoryIndex(redis, keys, settings)
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
    index = MemoryIndex(env.redis, env.keys, env.settings)
    before = await env.redis.hget(env.keys.doc("m1"), CONTEXT_FIELD)
    # same contextual model: the vectors stay, the new index has the field
    same = await index.reindex(HashEmbedder(), minilm)
    assert same.generation == 2 and same.has_context and same.context_model == MODEL_ID
    assert await env.redis.hmget(env.keys.doc("m1"), ["refine", CONTEXT_FIELD]) == [b"done", before]
    assert CONTEXT_FIELD in _attribute_names(await _ft_info(env.redis, env.keys.index_alias))
    # contextual model dropped: the vectors go, and nothing waits for a refiner
    plain = await index.reindex(HashEmbedder())
    assert plain.generation == 3 and not plain.has_context and plain.context_model == ""
    for memory_id in ("m1", "m2"):
        key = env.keys.doc(memory_id)
        assert await env.redis.hmget(key, ["refine", CONTEXT_FIELD]) == [b"off", None]
    assert CONTEXT_FIELD not in _attribute_names(await _ft_info(env.redis, env.keys.index_alias))
    assert await Refiner(env.redis, env.keys, minilm).refine_once() == 0
    # back to MiniLM: refiners fill the vectors in again
    back = await index.reindex(HashEmbedder(), minilm)
    assert back.has_context and back.context_model == MODEL_ID
    done = 0
    while step := await Refiner(env.redis, env.keys, minilm).refine_once():
        done += step
    assert done == 2
    assert await env.redis.hget(env.keys.doc("m2"), "refine") == b"done"


async def test_a_broken_contextual_model_does_not_break_search(settings: Settings) -> None:
    texts = ["Quinn rotates the API keys every quarter", "Rosa owns the billing dashboard"]
    await _write_and_work(settings, texts)
    async with AsyncMemoryClient(settings) as client:
        assert (await client.search("who rotates the API keys", top_k=2))[0].contextual is not None
        state = client._search_state
        assert state is not None and state.contextual is not None

        def broken(texts: Sequence[str]) -> Any:
            raise EmbeddingError("model file unreadable")

        inner = state.contextual.inner  # type: ignore[attr-defined]
        inner.embed_sync = broken
        state.contextual.clear()  # type: ignore[attr-defined]
        hits = await client.search("who rotates the API keys", top_k=2)
        assert hits and hits[0].content == texts[0]
        assert all(h.contextual is None for h in hits)


async def test_any_embedder_can_be_the_contextual_one(settings: Settings, redis: Redis) -> None:
    # e.g. litellm:<model> for a hosted model; "hash" here (256 dims, no model)
    settings = settings.model_copy(update={"contextual_embedder": "hash"})
    ids, report = await _write_and_work(settings, [TARGET, *DISTRACTORS])
    assert report.refined == report.indexed == 5
    keys = Keys(settings.key_prefix, settings.namespace)
    meta = await redis.hgetall(keys.index_meta)
    assert meta[b"context_model"] == b"hash:v1-256" and meta[b"context_dims"] == b"256"
    assert len(await redis.hget(keys.doc(ids[0]), CONTEXT_FIELD) or b"") == 256 * 4
    async with AsyncMemoryClient(settings) as client:
        hits = await client.search(TARGET, top_k=3)
        assert hits[0].id == ids[0] and hits[0].contextual == pytest.approx(1.0, abs=1e-5)
