"""linear_blend with the contextual cosines: the third signal of hybrid search."""

from __future__ import annotations

import pytest

from hindsight_redis.search.ranking import linear_blend, top

COSINE = {"a": 0.92, "b": 0.80, "c": 0.55, "d": 0.40}
BM25 = {"a": 12.0, "b": 6.0, "c": 3.0}
# "d" is last by cosine and absent from the keyword list; contextually it is first.
CONTEXT = {"a": 0.20, "b": 0.35, "c": 0.30, "d": 0.85}


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.35, 1.0])
def test_weight_zero_is_the_two_leg_blend(alpha: float, complete: bool) -> None:
    old = linear_blend(COSINE, BM25, alpha=alpha, keyword_complete=complete)
    new = linear_blend(
        COSINE,
        BM25,
        alpha=alpha,
        keyword_complete=complete,
        contextual=CONTEXT,
        contextual_weight=0.0,
    )
    assert new.keys() == old.keys()
    for doc_id, score in old.items():
        assert new[doc_id] == pytest.approx(score, abs=1e-12)


def test_no_contextual_scores_ignores_the_weight() -> None:
    old = linear_blend(COSINE, BM25, alpha=0.35)
    empty: dict[str, float] = {}
    for ctx in (None, empty):
        assert linear_blend(COSINE, BM25, alpha=0.35, contextual=ctx, contextual_weight=0.7) == old


def test_contextual_first_wins_with_weight_one() -> None:
    old = linear_blend(COSINE, BM25, alpha=0.35)
    assert top(old, len(old))[-1] == "d"  # last by vector + keyword
    fused = linear_blend(COSINE, BM25, alpha=0.35, contextual=CONTEXT, contextual_weight=1.0)
    assert top(fused, 1) == ["d"]
    # weight 1: the ranking is the contextual one, scaled 0..1
    assert top(fused, 4) == top(CONTEXT, 4)
    assert fused["d"] == pytest.approx(1.0) and fused["a"] == pytest.approx(0.0)


def test_blend_is_the_weighted_sum_of_scaled_contextual_and_old_blend() -> None:
    w = 0.5
    old = linear_blend(COSINE, BM25, alpha=0.35)
    fused = linear_blend(COSINE, BM25, alpha=0.35, contextual=CONTEXT, contextual_weight=w)
    low, high = min(CONTEXT.values()), max(CONTEXT.values())
    for doc_id, score in fused.items():
        scaled = (CONTEXT[doc_id] - low) / (high - low)
        assert score == pytest.approx(w * scaled + (1 - w) * old[doc_id])
    # "d": 0.5 * 1.0 + 0.5 * 0.16 beats "a": 0.5 * 0.0 + 0.5 * 1.0
    assert top(fused, 1) == ["d"]


def test_a_memory_not_refined_yet_is_ranked_by_the_other_two_signals() -> None:
    ctx = {"a": 0.9, "b": 0.6, "c": 0.3}  # "d" has no contextual vector yet
    w = 0.4
    old = linear_blend(COSINE, BM25, alpha=0.35)
    fused = linear_blend(COSINE, BM25, alpha=0.35, contextual=ctx, contextual_weight=w)
    # "d" keeps its two-signal score, as if the contextual one agreed with it
    assert fused["d"] == pytest.approx(old["d"])
    assert fused["c"] == pytest.approx(w * 0.0 + (1 - w) * old["c"])
    assert fused["a"] == pytest.approx(w * 1.0 + (1 - w) * old["a"])
    # even with weight 1 a fresh memory is not pushed below every refined one
    only = linear_blend(COSINE, BM25, alpha=0.35, contextual=ctx, contextual_weight=1.0)
    assert only["d"] == pytest.approx(old["d"]) and only["c"] == pytest.approx(0.0)


def test_a_fresh_exact_match_beats_refined_noise() -> None:
    cosine = {"fresh": 0.88, "noise": 0.10}
    bm25 = {"fresh": 10.5}
    ctx = {"noise": 0.09}  # only the unrelated memory is refined
    fused = linear_blend(
        cosine, bm25, alpha=0.35, keyword_complete=True, contextual=ctx, contextual_weight=0.5
    )
    assert top(fused, 1) == ["fresh"]


def test_contextual_only_doc_gets_the_other_lists_lows() -> None:
    cosine = {"a": 0.9, "b": 0.5}
    bm25 = {"a": 4.0, "b": 2.0}
    ctx = {"a": 0.2, "b": 0.3, "z": 0.8}  # "z" found by the contextual leg only
    fused = linear_blend(cosine, bm25, alpha=0.5, contextual=ctx, contextual_weight=0.5)
    assert set(fused) == {"a", "b", "z"}
    # z: contextual 1.0; cosine low 0.0; bm25 low (floor 0) = 2/4 = 0.5
    assert fused["z"] == pytest.approx(0.5 * 1.0 + 0.5 * (0.5 * 0.0 + 0.5 * 0.5))
    complete = linear_blend(
        cosine, bm25, alpha=0.5, keyword_complete=True, contextual=ctx, contextual_weight=0.5
    )
    assert complete["z"] == pytest.approx(0.5 * 1.0)  # no keyword credit when the list is complete


@pytest.mark.parametrize("weight", [-0.01, 1.01, -1.0, 2.0])
def test_weight_outside_zero_one_is_refused(weight: float) -> None:
    with pytest.raises(ValueError):
        linear_blend(COSINE, BM25, alpha=0.35, contextual=CONTEXT, contextual_weight=weight)
    with pytest.raises(ValueError):  # refused even without contextual scores
        linear_blend(COSINE, BM25, alpha=0.35, contextual_weight=weight)


def test_weight_bounds_are_accepted_and_mean_one_signal_or_the_other() -> None:
    two_legs = linear_blend(COSINE, BM25, alpha=0.35)
    none = linear_blend(COSINE, BM25, alpha=0.35, contextual=CONTEXT, contextual_weight=0.0)
    assert none == pytest.approx(two_legs)  # 0: the contextual cosines count for nothing
    only = linear_blend(COSINE, BM25, alpha=0.35, contextual=CONTEXT, contextual_weight=1.0)
    low, high = min(CONTEXT.values()), max(CONTEXT.values())
    # 1: the contextual cosines alone, min-max scaled
    assert only == pytest.approx({d: (c - low) / (high - low) for d, c in CONTEXT.items()})
