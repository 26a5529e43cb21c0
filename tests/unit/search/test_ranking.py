"""Fusion and ranking of the search legs: pure, no Redis."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hindsight_redis.search.ranking import (
    Blend,
    LegScores,
    cosines,
    fuse,
    linear_blend,
    min_max,
    rrf,
    top,
)

BLEND = Blend(alpha=0.35, contextual_weight=0.5)


def test_rrf_rewards_agreement() -> None:
    scores = rrf([["a", "b", "c"], ["b", "c", "d"]], k=60)
    assert top(scores, 1) == ["b"]
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)


def test_min_max() -> None:
    assert min_max({}) == {}
    assert min_max({"a": 2.0, "b": 2.0}) == {"a": 1.0, "b": 1.0}
    assert min_max({"a": 1.0, "b": 3.0}) == {"a": 0.0, "b": 1.0}
    assert min_max({"a": 1.0, "b": 3.0}, floor=0.0) == {"a": pytest.approx(1 / 3), "b": 1.0}


def test_linear_blend_scales_both_legs_and_gives_missing_the_leg_minimum() -> None:
    fused = linear_blend({"a": 0.9, "b": 0.5}, {"b": 10.0, "c": 5.0}, alpha=0.7)
    # cosines scaled to a=1, b=0; BM25 scaled with floor 0 to b=1, c=0.5.
    assert fused["a"] == pytest.approx(0.7 * 1.0 + 0.3 * 0.5)  # missing BM25 -> its minimum
    assert fused["b"] == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    assert fused["c"] == pytest.approx(0.7 * 0.0 + 0.3 * 0.5)  # missing cosine -> its minimum
    assert linear_blend({}, {"c": 2.0}, alpha=0.5) == {"c": pytest.approx(0.5)}
    with pytest.raises(ValueError):
        linear_blend({}, {}, alpha=1.5)


def test_top_breaks_ties_by_id() -> None:
    assert top({"b": 1.0, "a": 1.0, "c": 2.0}, 2) == ["c", "a"]


def test_a_complete_keyword_list_gives_non_matches_no_keyword_credit() -> None:
    cosine = {"on-topic": 0.80, "off-topic": 0.90}
    bm25 = {"on-topic": 5.0}
    # the keyword leg returned every match: "off-topic" shares no query term
    complete = linear_blend(cosine, bm25, alpha=0.35, keyword_complete=True)
    assert complete["on-topic"] > complete["off-topic"]
    # a truncated list: "off-topic" may match below the cut, it keeps the lowest score
    truncated = linear_blend(cosine, bm25, alpha=0.35)
    assert truncated["off-topic"] > complete["off-topic"]


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_cosines_of_returned_vectors_skip_known_and_malformed() -> None:
    q = _unit(1, 0)
    vectors = {"a": _unit(1, 0).tobytes(), "b": _unit(0, 1).tobytes(), "bad": b"xyz"}
    assert cosines(vectors, q, known={}) == {"a": pytest.approx(1.0), "b": pytest.approx(0.0)}
    assert set(cosines(vectors, q, known={"a": 0.3})) == {"b"}
    assert cosines(vectors, None, known={}) == {}


def test_cosines_read_float16_vectors_as_well_as_float32() -> None:
    q = _unit(3, 4)
    vectors = {"half": _unit(3, 4).astype(np.float16).tobytes(), "full": _unit(4, 3).tobytes()}
    found = cosines(vectors, q, known={})
    assert found == {"half": pytest.approx(1.0, abs=1e-3), "full": pytest.approx(0.96, abs=1e-6)}


def test_fuse_gives_each_candidate_every_cosine_it_can() -> None:
    q = _unit(1, 0)
    legs = LegScores(
        cosine={"v": 0.9},
        bm25={"k": 4.0},
        static_vectors={"k": _unit(1, 1).tobytes()},  # returned by the keyword leg
    )
    ranked = fuse(legs, mode="hybrid", blend=BLEND, top_k=5, query_vector=q)
    by_id = {r.id: r for r in ranked}
    assert set(by_id) == {"v", "k"}
    assert by_id["k"].vector == pytest.approx(float(_unit(1, 1) @ q))
    assert by_id["k"].bm25 == 4.0 and by_id["v"].keyword is None
    assert by_id["k"].keyword == 1.0  # scaled 0..1 against 0: the best BM25 is 1
    assert by_id["v"].contextual is None


@pytest.mark.parametrize(("mode", "first"), [("vector", "v"), ("keyword", "k")])
def test_fuse_single_leg_modes_rank_by_their_own_score(mode: str, first: str) -> None:
    legs = LegScores(cosine={"v": 0.9, "k": 0.1}, bm25={"k": 4.0, "v": 0.5})
    ranked = fuse(legs, mode=mode, blend=BLEND, top_k=2)  # type: ignore[arg-type]
    assert ranked[0].id == first and len(ranked) == 2


def test_fuse_rrf_and_top_k() -> None:
    legs = LegScores(cosine={"a": 0.9, "b": 0.8, "c": 0.1}, bm25={"b": 3.0, "c": 1.0})
    ranked = fuse(legs, mode="hybrid", blend=Blend(0.35, 0.5, "rrf"), top_k=2)
    # ranks: cosine a, b, c; BM25 b, c. b = 1/62 + 1/61, c = 1/63 + 1/62, a = 1/61.
    assert [r.id for r in ranked] == ["b", "c"]
    assert ranked[0].fused == pytest.approx(1 / 62 + 1 / 61)
    assert ranked[1].fused == pytest.approx(1 / 63 + 1 / 62)


def test_fuse_blends_the_contextual_leg() -> None:
    legs = LegScores(cosine={"a": 0.9, "b": 0.5}, bm25={}, context={"a": 0.1, "b": 0.9})
    plain = fuse(LegScores(cosine=legs.cosine), mode="hybrid", blend=BLEND, top_k=2)
    with_ctx = fuse(legs, mode="hybrid", blend=BLEND, top_k=2)
    assert plain[0].id == "a" and with_ctx[0].id == "b"
    assert with_ctx[0].contextual == 0.9


def test_floors_drop_what_no_leg_vouches_for_and_keep_the_order() -> None:
    legs = LegScores(
        cosine={"strong": 0.8, "weak": 0.2, "keyword": 0.1, "ctx": 0.1},
        bm25={"keyword": 3.0},
        context={"ctx": 0.6, "weak": 0.1},
    )
    floored = Blend(alpha=0.35, contextual_weight=0.5, min_vector=0.45, min_contextual=0.3)
    kept = fuse(legs, mode="hybrid", blend=floored, top_k=10)
    assert {r.id for r in kept} == {"strong", "keyword", "ctx"}  # "weak": nobody vouches
    everything = fuse(legs, mode="hybrid", blend=BLEND, top_k=10)
    assert [r.id for r in everything if r.id != "weak"] == [r.id for r in kept]
    vector = fuse(legs, mode="vector", blend=floored, top_k=10)
    assert [r.id for r in vector] == ["strong"]
    assert fuse(LegScores(cosine={"a": 0.1}), mode="hybrid", blend=floored, top_k=5) == []


def test_a_memory_in_another_script_ranks_by_its_vector_too() -> None:
    # An English question: the Chinese memory has the best cosine, but no keyword
    # or contextual score can speak for it; the English one has all three.
    legs = LegScores(
        cosine={"zh": 0.40, "en": 0.35, "other": 0.1},
        bm25={"en": 2.0},
        context={"en": 0.5, "other": 0.2},
        foreign={"zh"},
    )
    plain = Blend(alpha=0.35, contextual_weight=0.5, min_vector=0.45, min_vector_foreign=0.25)
    crossed = dataclasses.replace(plain, cross_language=True)
    assert "zh" not in [r.id for r in fuse(legs, mode="hybrid", blend=plain, top_k=3)]
    ranked = fuse(legs, mode="hybrid", blend=crossed, top_k=3)
    assert ranked[0].id == "zh" and ranked[0].fused == pytest.approx(1.0)
