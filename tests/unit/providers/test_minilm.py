"""MiniLMEmbedder: the contextual model (all-MiniLM-L6-v2, int8 ONNX)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hindsight_redis.providers.contextual import DIMS, MODEL_ID, MiniLMEmbedder
from hindsight_redis.providers.embedders import Embedder, make_embedder

TEXTS = [
    "ok",
    "The meeting was moved to Friday afternoon",
    "A considerably longer sentence about the quarterly budget review that took place "
    "last Tuesday in the main office building, with every department head present.",
    "Coffee.",
    "The billing-service-v2 deploy failed with ERR_CONN_RESET on the gateway at night",
    "Alice drinks green tea every morning before standup",
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_identity(minilm: MiniLMEmbedder) -> None:
    assert minilm.model_id == MODEL_ID == "onnx:all-MiniLM-L6-v2-int8"
    assert minilm.dims == DIMS == 384
    assert isinstance(minilm, Embedder)
    assert isinstance(make_embedder("minilm"), MiniLMEmbedder)


def test_rows_are_unit_norm_384_float32(minilm: MiniLMEmbedder) -> None:
    vecs = minilm.embed_sync(TEXTS)
    assert vecs.shape == (len(TEXTS), 384)
    assert vecs.dtype == np.float32
    assert np.all(np.isfinite(vecs))
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # different texts, different vectors
    assert len({row.tobytes() for row in vecs}) == len(TEXTS)


async def test_async_embed_matches_sync(minilm: MiniLMEmbedder) -> None:
    vecs = await minilm.embed(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(vecs, minilm.embed_sync(TEXTS), atol=1e-5)


def test_paraphrase_is_closer_than_unrelated_text(minilm: MiniLMEmbedder) -> None:
    a, b, other = minilm.embed_sync(
        [
            "The meeting was moved to Friday afternoon",
            "They rescheduled the meeting for Friday after lunch",
            "Penguins huddle together to survive the Antarctic winter",
        ]
    )
    assert float(a @ b) > 0.5
    assert float(a @ b) > float(a @ other) + 0.3
    assert float(a @ b) > float(b @ other) + 0.3


def test_empty_input_gives_no_rows(minilm: MiniLMEmbedder) -> None:
    nothing: tuple[list[str], tuple[str, ...]] = ([], ())
    for empty in nothing:
        vecs = minilm.embed_sync(empty)
        assert vecs.shape == (0, 384) and vecs.dtype == np.float32


async def test_empty_input_async(minilm: MiniLMEmbedder) -> None:
    assert (await minilm.embed([])).shape == (0, 384)


def test_bare_string_is_refused(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError):
        minilm.embed_sync("a single string")


async def test_bare_string_is_refused_async(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError):
        await minilm.embed("a single string")


def test_batch_equals_one_by_one_in_any_order(minilm: MiniLMEmbedder) -> None:
    one_by_one = np.vstack([minilm.embed_sync([t]) for t in TEXTS])
    np.testing.assert_allclose(minilm.embed_sync(TEXTS), one_by_one, atol=1e-4)
    for order in (
        list(reversed(range(len(TEXTS)))),
        sorted(range(len(TEXTS)), key=lambda i: -len(TEXTS[i])),
    ):
        batch = minilm.embed_sync([TEXTS[i] for i in order])
        np.testing.assert_allclose(batch, one_by_one[order], atol=1e-4)


def test_more_texts_than_one_model_batch_keep_their_rows(minilm: MiniLMEmbedder) -> None:
    # 70 texts of mixed lengths: 35 length-sorted model runs of two.
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "budget", "meeting", "deploy", "coffee", "friday"]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 40))) + f" #{i}" for i in range(70)]
    batch = minilm.embed_sync(texts)
    assert batch.shape == (70, 384)
    for i in (0, 13, 31, 32, 33, 64, 69):
        np.testing.assert_allclose(batch[i], minilm.embed_sync([texts[i]])[0], atol=1e-4)


def test_long_text_is_truncated_not_refused() -> None:
    short = MiniLMEmbedder(max_tokens=16)
    long_text = "word " * 2000
    vec = short.embed_sync([long_text])
    assert vec.shape == (1, 384)
    np.testing.assert_allclose(np.linalg.norm(vec), 1.0, atol=1e-5)


def test_threads_must_be_positive() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbedder(threads=0)
