"""Filter building, escaping, keyword queries and fusion: pure, no Redis."""

from __future__ import annotations

import math

import pytest

from hindsight_redis.codec import detect_language
from hindsight_redis.models import SearchFilters
from hindsight_redis.query import (
    build_filter,
    escape_tag,
    keyword_query,
    keyword_terms,
    linear_blend,
    min_max,
    parse_explain,
    rrf,
    tag_clause,
    top,
)
from hindsight_redis.schema import STOPWORDS


def test_stopword_list_is_the_179_nltk_words() -> None:
    assert len(STOPWORDS) == 179 == len(set(STOPWORDS))
    assert {"the", "wouldn't", "ourselves"} <= set(STOPWORDS)


@pytest.mark.parametrize(
    "value, escaped",
    [
        ("alice", "alice"),
        ("a|b}", r"a\|b\}"),
        ("*", r"\*"),
        ("-@status:{archived}", r"\-\@status\:\{archived\}"),
        ("a b,c", r"a\ b\,c"),
        ("$param", r"\$param"),
        ("user_42", "user_42"),
        ("用户", "用户"),
    ],
)
def test_escape_tag_escapes_every_operator(value: str, escaped: str) -> None:
    assert escape_tag(value) == escaped


def test_escape_tag_rejects_empty_value() -> None:
    with pytest.raises(ValueError):
        escape_tag("")


def test_filter_always_has_namespace_active_and_shared() -> None:
    expr = build_filter("team-a", SearchFilters())
    assert expr == r"@namespace:{team\-a} @status:{active} @visibility:{shared}"


def test_filter_include_archived_drops_status_clause() -> None:
    assert "@status" not in build_filter("ns", SearchFilters(include_archived=True))


def test_filter_with_agent_sees_its_private_memories() -> None:
    expr = build_filter("ns", SearchFilters(agent_id="planner"))
    assert "@agent_id:{planner}" in expr and "@visibility" not in expr


def test_filter_combines_all_fields_escaped() -> None:
    filters = SearchFilters(
        agent_id="a|b}",
        session_id="s-1",
        task_type="*",
        tags=("user:alice", "x y"),
        since=10.0,
        until=20.5,
    )
    expr = build_filter("ns", filters)
    assert r"@agent_id:{a\|b\}}" in expr
    assert r"@session_id:{s\-1}" in expr
    assert r"@task_type:{\*}" in expr
    assert r"@tags:{user\:alice} @tags:{x\ y}" in expr
    assert "@created_at:[10.0 20.5]" in expr


def test_filter_open_time_range() -> None:
    assert "@created_at:[5.0 +inf]" in build_filter("ns", SearchFilters(since=5))
    assert "@created_at:[-inf 7.0]" in build_filter("ns", SearchFilters(until=7))


def test_filter_rejects_non_finite_time() -> None:
    with pytest.raises(ValueError):
        build_filter("ns", SearchFilters(since=math.nan))


def test_injected_tag_value_stays_inside_its_braces() -> None:
    expr = tag_clause("agent_id", "x} | @status:{archived")
    # The only unescaped braces are the clause's own.
    unescaped = [ch for i, ch in enumerate(expr) if ch in "{}" and (i == 0 or expr[i - 1] != "\\")]
    assert unescaped == ["{", "}"]


def test_keyword_terms_drop_stopwords_and_operators() -> None:
    terms = keyword_terms("What is the -@status:{archived} | * of $x?")
    assert terms == ["status", "archived", "x"]
    for term in terms:
        assert all(ch.isalnum() or ch in '_ "' for ch in term)


def test_identifiers_become_terms_and_phrases() -> None:
    terms = keyword_terms("billing-service-v2 ERR_CONN_RESET user_42")
    assert "billing" in terms and '"billing service v2"' in terms
    assert "err_conn_reset" in terms and '"err conn reset"' in terms
    assert "user_42" in terms and '"user 42"' in terms


def test_chinese_runs_use_the_segmentation_given() -> None:
    terms = keyword_terms("用户喜欢什么语言 python", {"用户喜欢什么语言": ["用户", "喜欢", "语言"]})
    assert terms == ["python", "用户", "喜欢", "语言"]
    assert keyword_terms("中文") == ["中文"]


def test_parse_explain_keeps_segmented_words() -> None:
    lines = [
        "UNION {",
        "  用户喜欢",
        "  INTERSECT {",
        "    用户(expanded)",
        "    喜欢(expanded)",
        "  }",
        "}",
        "",
    ]
    assert parse_explain(lines) == ["用户", "喜欢"]
    assert parse_explain([b"UNION {", b"  \xe4\xb8\xad\xe6\x96\x87", b"}"]) == ["中文"]


def test_keyword_query_without_terms_is_none() -> None:
    assert keyword_query([], "@namespace:{a}") is None


def test_keyword_query_scores_each_term_and_selects_under_the_filter() -> None:
    # Optional terms score exactly; the union selects (stems included) at a
    # reduced weight, since under a filter RediSearch scores it for one term.
    assert keyword_query(["x", '"y z"'], "@namespace:{a} @status:{active}") == (
        '~@content:x ~@content:"y z" (@content:(x | "y z"))=>{$weight: 0.5} '
        "(@namespace:{a} @status:{active})=>{$weight: 0.0}"
    )
    assert keyword_query(["x"], "@a:{b} @c:{d}", union_weight=0.2) == (
        "~@content:x (@content:(x))=>{$weight: 0.2} (@a:{b} @c:{d})=>{$weight: 0.0}"
    )


def test_keyword_query_without_a_filter_is_the_plain_union() -> None:
    assert keyword_query(["x", "y"], None) == "@content:(x | y)"


def test_detect_language() -> None:
    assert detect_language("用户喜欢用中文回答") == "chinese"
    assert detect_language("deploy billing 服务") == "chinese"
    assert detect_language("plain English text") == "english"


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
