"""Filter building, escaping, keyword queries and fusion: pure, no Redis."""

from __future__ import annotations

import math

import pytest

from hindsight_redis.core.checks import check_search, search_filters
from hindsight_redis.core.models import SearchFilters
from hindsight_redis.errors import InvalidQuery
from hindsight_redis.index.filters import build_filter, escape_tag, tag_clause, visible
from hindsight_redis.language.stopwords import stopwords
from hindsight_redis.search.query import keyword_query, keyword_terms, parse_explain, seam_words


def test_stopword_list_is_the_179_nltk_words() -> None:
    words = stopwords()
    assert len(words) == 179 == len(set(words))
    assert {"the", "wouldn't", "ourselves"} <= set(words)


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


def test_a_viewer_sees_shared_memories_and_its_own() -> None:
    expr = build_filter("ns", SearchFilters(viewer="planner"))
    assert expr.endswith("(@visibility:{shared} | @agent_id:{planner})")


def test_the_agent_filter_narrows_and_never_widens() -> None:
    # Written by "planner", seen by nobody in particular: only the shared ones.
    expr = build_filter("ns", SearchFilters(agent_id="planner"))
    assert "@visibility:{shared}" in expr and expr.endswith("@agent_id:{planner}")
    seen_by_coder = build_filter("ns", SearchFilters(agent_id="planner", viewer="coder"))
    assert "(@visibility:{shared} | @agent_id:{coder}) @agent_id:{planner}" in seen_by_coder


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


@pytest.mark.parametrize(
    ("query", "top_k", "mode", "message"),
    [
        ("", 5, "hybrid", "non-empty"),
        (None, 5, "hybrid", "non-empty"),
        ("x" * 8001, 5, "hybrid", "limit is 8000"),
        ("ok", 0, "hybrid", "top_k"),
        ("ok", 101, "hybrid", "top_k"),
        ("ok", True, "hybrid", "top_k"),
        ("ok", "5", "hybrid", "top_k"),
        ("ok", 5, "fuzzy", "mode"),
    ],
)
def test_bad_search_arguments_are_query_errors(
    query: object, top_k: object, mode: object, message: str
) -> None:
    with pytest.raises(InvalidQuery, match=message) as caught:
        check_search(query, top_k, mode)
    assert isinstance(caught.value, ValueError)


def test_check_search_strips_the_query() -> None:
    assert check_search("  alice  ", 5, "keyword") == "alice"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tags": "ops"}, "list of strings"),
        ({"tags": ["ops", ""]}, "non-empty"),
        ({"tags": [3]}, "non-empty strings"),
        ({"since": "yesterday"}, "since must be a finite number"),
        ({"until": math.inf}, "until must be a finite number"),
        ({"since": True}, "since"),
        ({"since": 20.0, "until": 10.0}, "after until"),
        ({"agent_id": 7}, "agent_id must be a string"),
        ({"include_archived": "yes"}, "include_archived"),
    ],
)
def test_bad_search_filters_are_query_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidQuery, match=message):
        search_filters(**kwargs)


def test_search_filters_keep_what_was_given() -> None:
    filters = search_filters(agent_id="a", tags=["x", "y"], since=1, until=2.5)
    assert filters == SearchFilters(agent_id="a", tags=("x", "y"), since=1.0, until=2.5)
    assert search_filters(session_id="") == SearchFilters()


def test_visible_applies_the_default_filters_to_a_row() -> None:
    row = {"namespace": b"ns", "status": b"active", "visibility": b"shared"}
    assert visible(row, "ns", SearchFilters())
    assert not visible(row, "other", SearchFilters())
    archived = {**row, "status": b"archived"}
    assert not visible(archived, "ns", SearchFilters())
    assert visible(archived, "ns", SearchFilters(include_archived=True))
    private = {**row, "visibility": b"private", "agent_id": b"planner"}
    assert not visible(private, "ns", SearchFilters())
    assert not visible(private, "ns", SearchFilters(agent_id="planner"))  # a filter, not a key
    assert not visible(private, "ns", SearchFilters(viewer="coder"))
    assert visible(private, "ns", SearchFilters(viewer="planner"))


def test_common_terms_only_score_and_the_rest_select() -> None:
    assert keyword_query(["the_x", "rare"], None, common={"the_x"}) == (
        "~@content:the_x ~@content:rare (@content:(rare))=>{$weight: 0.5}"
    )
    assert keyword_query(["a", "b"], "@x:{1} @y:{2}", common={"a"}) == (
        "~@content:a ~@content:b (@content:(b))=>{$weight: 0.5} (@x:{1} @y:{2})=>{$weight: 0.0}"
    )
    # every term common: all select, as without the statistics
    assert keyword_query(["a", "b"], None, common={"a", "b"}) == "@content:(a | b)"


def test_chinese_function_words_leave_the_keyword_terms() -> None:
    segmented = {"我什么时候去看牙": ["我", "什么时候", "去看", "牙"]}
    assert keyword_terms("我什么时候去看牙", segmented) == ["去看", "牙", "看牙"]
    # words of function characters only ("我的", "在哪") go too; content words stay
    segmented = {"我的停车位在哪": ["我的", "停车", "位", "在哪"]}
    assert keyword_terms("我的停车位在哪", segmented) == ["停车", "位", "车位"]
    # a query of nothing else keeps them: something must select
    assert keyword_terms("我是谁", {"我是谁": ["我", "是", "谁"]}) == ["我", "是", "谁"]
    # an English word is never a Chinese function word
    assert keyword_terms("我的 redis", {"我的": ["我的"]}) == ["redis"]


def test_words_the_segmenter_may_cut_otherwise_are_matched_too() -> None:
    # "停车|位" in a query is "车位" in a document; "编辑器" may be "编辑" there
    assert seam_words(["停车", "位"]) == ["车位"]
    assert seam_words(["编辑器", "配色"]) == ["编辑", "辑器"]
    # two words of two characters: friso agreed on both, no pair across them
    assert seam_words(["工资", "到账"]) == []
    # never next to a function word, never with another script
    assert seam_words(["我", "停车"]) == []
    assert seam_words(["redis", "库"]) == []
