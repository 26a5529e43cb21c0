"""The Chinese re-ranking's pure parts: the blend, the pool, the stored vector's check."""

from __future__ import annotations

import numpy as np

from hindsight_redis.core.models import SearchHit
from hindsight_redis.providers.multilingual import DIMS, pack, unpack
from hindsight_redis.search.analysis import QueryAnalysis
from hindsight_redis.search.rerank.chinese import DEPTH, blend, pool_size


def hit(memory_id: str, fused: float) -> SearchHit:
    return SearchHit(memory_id, memory_id, "", "", "", "", (), 1.0, fused=fused)


def test_the_model_reorders_the_places_it_was_given_and_no_other() -> None:
    hits = [hit("a", 0.9), hit("en", 0.8), hit("b", 0.7), hit("c", 0.6), hit("tail", 0.1)]
    # a, b and c are Chinese (places 0, 2, 3); c is the nearest, a the farthest
    ranked = blend(hits, {0: 0.70, 2: 0.80, 3: 0.95}, 0.7)
    assert [h.id for h in ranked] == ["c", "en", "b", "a", "tail"]
    # each takes the score of its new place: the scores stay in rank order
    assert [h.fused for h in ranked] == [0.9, 0.8, 0.7, 0.6, 0.1]


def test_the_weight_sets_how_far_the_cosine_moves_a_hit() -> None:
    hits = [hit("a", 0.9), hit("b", 0.5), hit("c", 0.1)]
    cosines = {0: 0.70, 1: 0.75, 2: 0.80}
    assert [h.id for h in blend(hits, cosines, 0.0)] == ["a", "b", "c"]
    assert [h.id for h in blend(hits, cosines, 1.0)] == ["c", "b", "a"]
    # 0.3 * fused + 0.7 * cosine, each scaled: a 0.3, b 0.5 * 0.3 + 0.5 * 0.7 = 0.5, c 0.7
    assert [h.id for h in blend(hits, cosines, 0.7)] == ["c", "b", "a"]
    assert [h.id for h in blend(hits, cosines, 0.4)] == ["a", "b", "c"]  # 0.6 / 0.5 / 0.4


def test_fewer_than_two_places_change_nothing() -> None:
    hits = [hit("a", 0.9), hit("b", 0.5)]
    assert blend(hits, {1: 0.9}, 0.7) == hits
    assert blend(hits, {}, 0.7) == hits


def test_equal_cosines_keep_the_fused_order() -> None:
    hits = [hit("a", 0.9), hit("b", 0.5), hit("c", 0.4)]
    assert [h.id for h in blend(hits, {0: 0.5, 1: 0.5, 2: 0.5}, 0.7)] == ["a", "b", "c"]


def test_only_a_chinese_query_widens_the_pool() -> None:
    chinese, english = QueryAnalysis.of("我的咖啡要怎么点", 0.0), QueryAnalysis.of("coffee", 0.0)
    assert pool_size(5, chinese, 30, 0.7) == DEPTH
    assert pool_size(5, chinese, 10, 0.7) == 10  # never deeper than the legs
    assert pool_size(20, chinese, 30, 0.7) == 20
    assert pool_size(5, chinese, 30, 0.0) == 5  # off
    assert pool_size(5, english, 30, 0.7) == 5


def test_a_stored_vector_is_read_back_only_for_the_text_it_was_embedded_from() -> None:
    vector = np.random.default_rng(0).normal(size=DIMS).astype(np.float32)
    vector /= np.linalg.norm(vector)
    raw = pack("我喝咖啡不加糖", vector)
    assert len(raw) == 4 + 2 * DIMS  # the check, then float16
    back = unpack("我喝咖啡不加糖", raw)
    assert back is not None and back.dtype == np.float32
    assert float(np.dot(back, vector)) > 0.999
    assert unpack("我喝咖啡加糖", raw) is None  # the memory changed since
    assert unpack("我喝咖啡不加糖", raw[:-2]) is None  # damaged
    assert unpack("我喝咖啡不加糖", None) is None and unpack("x", b"") is None
