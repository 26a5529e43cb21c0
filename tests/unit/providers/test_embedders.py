"""Embedders: shapes, normalisation, multilingual sanity, caching, litellm retries."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from hindsight_redis.errors import EmbeddingError
from hindsight_redis.providers.embedders import (
    CachedEmbedder,
    Embedder,
    HashEmbedder,
    LiteLLMEmbedder,
    LocalEmbedder,
    make_embedder,
)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def assert_unit_rows(vecs: np.ndarray, n: int, dims: int) -> None:
    assert vecs.shape == (n, dims)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


# ------------------------------------------------------------------ hash


def test_hash_embedder_shapes_and_normalisation() -> None:
    emb = HashEmbedder(dims=64)
    vecs = emb.embed_sync(["hello world", "你好世界", ""])
    assert_unit_rows(vecs, 3, 64)
    assert emb.model_id == "hash:v1-64"
    assert isinstance(emb, Embedder)


def test_hash_embedder_is_deterministic_across_instances() -> None:
    a = HashEmbedder().embed_sync(["User prefers answers in Chinese"])
    b = HashEmbedder().embed_sync(["User prefers answers in Chinese"])
    np.testing.assert_array_equal(a, b)


def test_hash_embedder_paraphrase_closer_than_unrelated_text() -> None:
    v = HashEmbedder().embed_sync(
        [
            "the user prefers answers in Chinese",
            "user prefers Chinese answers",
            "deploy the redis cluster tonight",
        ]
    )
    assert cos(v[0], v[1]) > cos(v[0], v[2])
    z = HashEmbedder().embed_sync(["用户喜欢用中文回答", "用户喜欢中文回答", "服务器今晚部署"])
    assert cos(z[0], z[1]) > cos(z[0], z[2])


async def test_empty_batch_gives_empty_matrix() -> None:
    assert (await HashEmbedder(dims=32).embed([])).shape == (0, 32)
    assert LocalEmbedder().embed_sync([]).shape[0] == 0


def test_a_bare_string_is_rejected_not_embedded_char_by_char() -> None:
    with pytest.raises(TypeError, match="list"):
        HashEmbedder().embed_sync("hello")


# ----------------------------------------------------------------- local


def test_local_embedder_shapes_and_id(local: LocalEmbedder) -> None:
    vecs = local.embed_sync(["hello", "你好", "emoji 🎉 only?", ""])
    assert_unit_rows(vecs, 4, local.dims)
    assert local.model_id.startswith("local:static-")


async def test_local_embedder_async_matches_sync(local: LocalEmbedder) -> None:
    texts = ["alpha beta", "用户喜欢中文"] * 300  # large enough to go through a worker thread
    np.testing.assert_allclose(await local.embed(texts), local.embed_sync(texts), atol=1e-6)


def test_local_embedder_english_related_pair_beats_unrelated(local: LocalEmbedder) -> None:
    v = local.embed_sync(
        [
            "The user prefers answers in Chinese",
            "Which language does the user want replies in?",
            "Restart the database",
        ]
    )
    assert cos(v[0], v[1]) > cos(v[0], v[2])


def test_local_embedder_chinese_related_pair_beats_unrelated(local: LocalEmbedder) -> None:
    v = local.embed_sync(["用户对花生过敏", "用户对什么食物过敏?", "服务器部署在杭州"])
    assert cos(v[0], v[1]) > cos(v[0], v[2])


def test_local_embedder_crosses_languages(local: LocalEmbedder) -> None:
    v = local.embed_sync(["Alice is allergic to peanuts", "alice 对花生过敏", "服务器部署在杭州"])
    assert cos(v[0], v[1]) > cos(v[0], v[2])


def test_local_embedder_missing_model_dir_is_a_clear_error(tmp_path: Any) -> None:
    with pytest.raises(EmbeddingError, match="config"):
        _ = LocalEmbedder(tmp_path).dims


# ----------------------------------------------------------------- cache


class CountingEmbedder:
    def __init__(self) -> None:
        self.inner = HashEmbedder(dims=16)
        self.calls: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dims(self) -> int:
        return 16

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed_sync(texts)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_sync(texts)


async def test_cache_hits_misses_and_ttl() -> None:
    now = [1000.0]
    inner = CountingEmbedder()
    cache = CachedEmbedder(inner, max_items=10, ttl_s=60, clock=lambda: now[0])
    first = await cache.embed(["a", "b", "a"])
    assert inner.calls == [["a", "b"]]
    assert (cache.hits, cache.misses) == (0, 3)
    again = await cache.embed(["b", "a"])
    assert inner.calls == [["a", "b"]] and cache.hits == 2
    np.testing.assert_array_equal(again, first[[1, 0]])
    now[0] += 61
    await cache.embed(["a"])
    assert inner.calls[-1] == ["a"]
    assert cache.model_id == inner.model_id and cache.dims == 16


async def test_cache_evicts_least_recently_used() -> None:
    inner = CountingEmbedder()
    cache = CachedEmbedder(inner, max_items=2, ttl_s=60)
    await cache.embed(["a"])
    await cache.embed(["b"])
    await cache.embed(["a"])  # a is now most recent
    await cache.embed(["c"])  # evicts b
    await cache.embed(["a", "b"])
    assert inner.calls[-1] == ["b"]
    assert (await cache.embed([])).shape == (0, 16)


# --------------------------------------------------------------- factory


def test_make_embedder_names() -> None:
    assert isinstance(make_embedder("hash", dims=32), HashEmbedder)
    assert isinstance(make_embedder("local"), LocalEmbedder)
    lite = make_embedder("litellm:text-embedding-3-small", dims=1536)
    assert lite.model_id == "litellm:text-embedding-3-small" and lite.dims == 1536


@pytest.mark.parametrize("name", ["", "nope", "litellm:", "local:other", "openai"])
def test_make_embedder_rejects_unknown_names(name: str) -> None:
    with pytest.raises(ValueError, match="embedder"):
        make_embedder(name)


# --------------------------------------------------------------- litellm


@contextlib.contextmanager
def _hanging_up_server() -> Iterator[tuple[str, list[int]]]:
    """An HTTP endpoint that accepts each connection and closes it at once; yields its
    base URL and a list that grows by one per connection (one per attempt)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.05)
    accepted: list[int] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted
    finally:
        done.set()
        thread.join()
        listener.close()


async def test_litellm_failing_server_is_tried_once_per_retry_then_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Counted by connections, not timed: each attempt is one request, so neither the
    # OpenAI SDK nor litellm retries on its own under ours.
    with _hanging_up_server() as (api_base, attempts):
        emb = LiteLLMEmbedder(
            "openai/text-embedding-3-small",
            api_base=api_base,
            api_key=SecretStr("sk-test"),
            max_retries=2,
            backoff_initial_s=0.01,
            timeout_s=10.0,
        )
        with pytest.raises(EmbeddingError, match="after 3 attempts") as info:
            await emb.embed(["hello"])
    assert info.value.retryable
    assert len(attempts) == 3
    assert sum("retry" in r.getMessage() for r in caplog.records) == 2


async def test_litellm_mock_response_goes_through_real_litellm() -> None:
    # litellm's embedding mock returns one vector per call, so batch size 1.
    emb = LiteLLMEmbedder(
        "text-embedding-3-small", batch_size=1, extra={"mock_response": [3.0, 4.0]}
    )
    vecs = await emb.embed(["a", "b", "c"])
    np.testing.assert_allclose(vecs, [[0.6, 0.8]] * 3, rtol=1e-6)
    assert emb.dims == 2


class FakeProvider:
    def __init__(self, fail_first: int = 0, error: Exception | None = None) -> None:
        self.fail_first = fail_first
        self.error = error or TimeoutError("slow")
        self.batches: list[list[str]] = []
        self.active = 0
        self.peak = 0

    async def __call__(self, **kwargs: Any) -> dict[str, Any]:
        import asyncio

        if self.fail_first > 0:
            self.fail_first -= 1
            raise self.error
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)  # not a wait: a request's duration, so concurrent calls overlap
        self.active -= 1
        texts = kwargs["input"]
        self.batches.append(texts)
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(texts)]
        return {"data": list(reversed(data))}


async def test_litellm_batches_limits_concurrency_and_normalises() -> None:
    fake = FakeProvider()
    emb = LiteLLMEmbedder("m", batch_size=4, max_concurrency=2, embed_fn=fake)
    texts = [f"t{'x' * i}" for i in range(10)]
    vecs = await emb.embed(texts)
    assert sorted(len(b) for b in fake.batches) == [2, 4, 4]
    assert fake.peak <= 2
    assert_unit_rows(vecs, 10, 3)
    expected = np.array([[len(t), 1.0, 0.0] for t in texts])
    np.testing.assert_allclose(
        vecs, expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-6
    )


async def test_litellm_retries_transient_errors_then_succeeds() -> None:
    fake = FakeProvider(fail_first=2)
    emb = LiteLLMEmbedder("m", max_retries=2, backoff_initial_s=0.001, embed_fn=fake)
    assert (await emb.embed(["x"])).shape == (1, 3)


async def test_litellm_does_not_retry_client_errors() -> None:
    class BadRequest(Exception):
        status_code = 400

    fake = FakeProvider(fail_first=5, error=BadRequest("bad input"))
    emb = LiteLLMEmbedder("m", max_retries=3, backoff_initial_s=0.001, embed_fn=fake)
    with pytest.raises(EmbeddingError, match="not retryable") as info:
        await emb.embed(["x"])
    assert not info.value.retryable
    assert fake.fail_first == 4


async def test_litellm_dims_unknown_until_probed() -> None:
    emb = LiteLLMEmbedder("m", embed_fn=FakeProvider())
    with pytest.raises(EmbeddingError, match="probe_dims"):
        _ = emb.dims
    assert await emb.probe_dims() == 3
    assert emb.dims == 3


def test_litellm_dims_from_request_or_litellm_model_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert LiteLLMEmbedder("m", extra={"dimensions": 512}).dims == 512
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="needs an API key: set OPENAI_API_KEY"):
        _ = LiteLLMEmbedder("text-embedding-3-small").dims  # said before litellm is loaded
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert LiteLLMEmbedder("text-embedding-3-small").dims == 1536


async def test_litellm_failed_batch_raises_embedding_error_not_a_group() -> None:
    class Unauthorized(Exception):
        status_code = 401

    fake = FakeProvider(fail_first=1, error=Unauthorized("bad key"))
    emb = LiteLLMEmbedder("m", batch_size=1, max_concurrency=1, embed_fn=fake)
    with pytest.raises(EmbeddingError, match="Unauthorized"):
        await emb.embed(["a", "b", "c"])


def test_the_llm_and_embedding_providers_share_one_retry_rule() -> None:
    from hindsight_redis.providers import litellm_embedder, llm, retries

    assert llm.is_retryable is litellm_embedder.is_retryable is retries.is_retryable

    class Status(Exception):
        def __init__(self, code: int) -> None:
            self.status_code = code

    assert [
        c
        for c in (400, 401, 404, 408, 409, 422, 425, 429, 500, 503)
        if retries.is_retryable(Status(c))
    ] == [408, 409, 425, 429, 500, 503]

    class RateLimitError(Exception):  # litellm's, by name
        pass

    assert retries.is_retryable(RateLimitError()) and retries.is_retryable(TimeoutError())
    assert not retries.is_retryable(ValueError("bad request"))


def test_a_missing_key_is_named_before_litellm_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from hindsight_redis.providers.credentials import missing_key, provider_of

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COHERE_API_KEY", "k")
    assert [provider_of(m) for m in ("text-embedding-3-small", "cohere/embed-v4", "nomic")] == [
        "openai",
        "cohere",
        "",
    ]
    told = missing_key("text-embedding-3-small", api_key=None, setting="HINDSIGHT_X")
    assert told is not None and "OPENAI_API_KEY" in told and "HINDSIGHT_X" in told
    assert missing_key("text-embedding-3-small", api_key="sk-local", setting="S") is None
    assert missing_key("cohere/embed-v4", api_key=None, setting="S") is None  # in the env
    assert missing_key("ollama/nomic-embed-text", api_key=None, setting="S") is None  # local
    assert missing_key("azure/my-deployment", api_key=None, setting="S") is None  # unknown


def test_credentials_and_bad_requests_are_never_retried() -> None:
    from hindsight_redis.providers import retries

    class AuthenticationError(Exception):  # litellm's, by name (a 401)
        status_code = 401

    class InternalServerError(Exception):  # litellm's name for a missing key: a 500
        status_code = 500

    assert not retries.is_retryable(AuthenticationError("Incorrect API key provided"))
    assert not retries.is_retryable(InternalServerError("OpenAIException - Missing credentials"))
    assert retries.is_retryable(InternalServerError("upstream overloaded"))
