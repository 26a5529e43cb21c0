"""Which query terms are common: cached counts, their expiry, and the thresholds."""

from __future__ import annotations

from hindsight_redis.search.term_stats import TermStats


def stats(**kwargs: float) -> TermStats:
    options = {"common_share": 0.05, "common_min_docs": 1000, **kwargs}
    return TermStats(**options)  # type: ignore[arg-type]


def test_a_term_over_the_budget_only_scores_unless_under_the_floor() -> None:
    s = stats()
    s.record({"caroline": 6_000, "paris": 300, "ok": 4_000}, num_docs=100_000, now=0.0)
    assert s.common(["caroline", "paris", "ok"], now=1.0) == {"caroline"}  # 5% is 5,000
    small = stats()
    small.record({"caroline": 900, "paris": 3}, num_docs=2_000, now=0.0)
    assert small.common(["caroline", "paris"], now=1.0) == set()  # under the 1,000 floor


def test_the_rarest_terms_select_while_their_counts_fit_the_budget() -> None:
    s = stats()  # 5% of 100,000: the selecting terms may match 5,000 memories in all
    s.record({"x": 2_000, "y": 2_500, "z": 3_000, "w": 600}, num_docs=100_000, now=0.0)
    assert s.common(["z", "y", "x"], now=1.0) == {"z"}  # 2,000 + 2,500 fit, + 3,000 not
    assert s.common(["w", "x", "y"], now=1.0) == {"y"}
    assert s.common(["x", "x", "y"], now=1.0) == set()  # a repeated term counts once


def test_the_rarest_term_always_selects_and_unknown_terms_select() -> None:
    s = stats()
    s.record({"a": 50_000, "b": 60_000}, num_docs=100_000, now=0.0)
    assert s.common(["a", "b"], now=1.0) == {"b"}  # a selects, though over the budget
    assert s.common(["b"], now=1.0) == set()
    assert s.common(["a", "b", "new"], now=1.0) == {"a", "b"}
    assert s.unknown(["a", "new"], now=1.0) == ["new"]


def test_counts_expire_and_are_bounded() -> None:
    s = stats(ttl_s=10.0, max_terms=2)
    s.record({"a": 50_000}, num_docs=100_000, now=0.0)
    assert s.common(["a", "z"], now=5.0) == {"a"}
    assert s.common(["a", "z"], now=11.0) == set() and s.needs_size(now=11.0)
    s.record({"b": 1, "c": 2}, num_docs=None, now=0.0)
    assert s.unknown(["a", "b", "c"], now=1.0) == ["a"]  # the oldest was evicted


def test_off_at_share_one() -> None:
    s = stats(common_share=1.0)
    s.record({"a": 99_000}, num_docs=100_000, now=0.0)
    assert s.common(["a", "b"], now=1.0) == set()


def test_a_small_index_counts_no_terms() -> None:
    s = stats()
    assert s.to_count(["a"], now=0.0) == ["a"]  # size unknown yet
    s.record({}, num_docs=800, now=0.0)
    assert s.to_count(["a", "b"], now=1.0) == []  # no term can pass the 1,000 floor
    s.record({}, num_docs=5_000, now=2.0)
    assert s.to_count(["a", "b"], now=3.0) == ["a", "b"]
