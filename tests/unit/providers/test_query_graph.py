"""The contextual model's int8 query graph: close to the full graph, built once, optional."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from hindsight_redis.providers import query_graph
from hindsight_redis.providers.contextual import MiniLMEmbedder, default_model_path

SENTENCES = [
    "When did Caroline go to the LGBTQ support group?",
    "What does Melanie like to paint on weekends",
    "Yes! Last week, with my kids.",
    "The billing-service-v2 deploy failed with ERR_CONN_RESET",
    "ok",
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HINDSIGHT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_query_vectors_are_close_to_the_full_graph_and_built_once(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = MiniLMEmbedder().embed_sync(SENTENCES)
    queries = MiniLMEmbedder(int8_graph=True)  # one text per call, as searches embed
    fast = np.concatenate([queries.embed_sync([s]) for s in SENTENCES])
    cosines = (full * fast).sum(axis=1)
    assert cosines[:-1].min() > 0.99, cosines  # sentences: within 0.01
    assert cosines[-1] > 0.95, cosines  # two letters: activations quantise worst
    assert not np.allclose(full, fast)  # another graph did run
    [built] = cache.glob("minilm-query-*.onnx")

    def no_rebuild(*_: object) -> None:
        raise AssertionError("the cached graph was rebuilt")

    monkeypatch.setattr(query_graph, "build", no_rebuild)
    assert query_graph.query_graph(default_model_path()) == built
    again = MiniLMEmbedder(int8_graph=True).embed_sync(SENTENCES[:1])
    assert np.allclose(again, fast[:1], atol=1e-6)


def test_without_onnx_queries_use_the_full_graph(
    cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # import fails
    with caplog.at_level(logging.WARNING):
        vectors = MiniLMEmbedder(int8_graph=True).embed_sync(SENTENCES[:2])
    assert "needs the onnx package" in caplog.text
    assert np.allclose(vectors, MiniLMEmbedder().embed_sync(SENTENCES[:2]), atol=1e-6)
    assert not list(cache.glob("*.onnx"))


def test_an_unwritable_cache_falls_back_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("HINDSIGHT_CACHE_DIR", str(blocker / "cache"))
    with caplog.at_level(logging.WARNING):
        assert query_graph.query_graph(default_model_path()) is None
    assert "cannot build the int8 query graph" in caplog.text


def test_the_query_graph_is_fused_and_reads_padded_batches(cache: Path) -> None:
    import onnx

    path = query_graph.query_graph(default_model_path())
    assert path is not None
    nodes = onnx.load(str(path)).graph.node
    assert sum(n.op_type == "QAttention" for n in nodes) == 6  # one per layer
    assert len(nodes) < 150  # the exported graph quantised has about 440
    # several texts of different lengths in one padded batch: padding is masked
    batched = MiniLMEmbedder(int8_graph=True).embed_sync(SENTENCES)
    assert (batched * MiniLMEmbedder().embed_sync(SENTENCES)).sum(axis=1)[:-1].min() > 0.98


def test_a_fused_graph_that_does_not_match_falls_back_to_the_exported_ops(
    cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import onnx

    monkeypatch.setattr(query_graph, "_MIN_COSINE", 1.01)  # no graph is that close
    with caplog.at_level(logging.WARNING):
        path = query_graph.query_graph(default_model_path())
    assert path is not None
    assert "the fused graph is not usable" in caplog.text
    assert not any(n.op_type == "QAttention" for n in onnx.load(str(path)).graph.node)
    fast = MiniLMEmbedder(int8_graph=True).embed_sync(SENTENCES[:1])
    assert (fast * MiniLMEmbedder().embed_sync(SENTENCES[:1])).sum() > 0.99
