"""A search reads its query once (``search.analysis``): scripts, terms, times, past questions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_redis.search.analysis import SEGMENTED_RUNS, QueryAnalysis, TimeQuery
from hindsight_redis.search.query import keyword_terms
from hindsight_redis.settings import SearchSettings

NOW = datetime(2024, 3, 14, 15, 0, tzinfo=UTC).timestamp()  # a Thursday


def test_an_english_question() -> None:
    found = QueryAnalysis.of("Which billing-service-v2 alert woke Alice up?", NOW)
    assert found.text == "Which billing-service-v2 alert woke Alice up?"
    assert found.han_runs == () and not found.chinese and found.script == "latin"
    assert found.runs_to_segment() == ()
    # stopwords dropped, an identifier as its parts and their exact phrase
    assert found.terms() == [
        "billing",
        "service",
        "v2",
        '"billing service v2"',
        "alert",
        "woke",
        "alice",
    ]
    assert found.time_range is None and not found.asks_time and not found.about_the_past


def test_a_chinese_question_names_its_runs_and_takes_their_words_once_segmented() -> None:
    found = QueryAnalysis.of("用户喜欢什么语言 python 用户喜欢什么语言", NOW)
    assert found.chinese and found.script == "han"
    assert found.han_runs == ("用户喜欢什么语言", "用户喜欢什么语言")
    assert found.runs_to_segment() == ("用户喜欢什么语言",)  # each run segmented once
    assert found.terms() == ["python", "用户喜欢什么语言"]  # not segmented: the run whole
    segmented = {"用户喜欢什么语言": ["用户", "喜欢", "语言"]}
    assert found.terms(segmented) == ["python", "用户", "喜欢", "语言"]


def test_at_most_the_first_runs_are_segmented() -> None:
    runs = [chr(0x4E00 + n) * 2 for n in range(SEGMENTED_RUNS + 5)]  # distinct runs
    found = QueryAnalysis.of(" ".join(runs), NOW)
    assert found.han_runs == tuple(runs)
    assert found.runs_to_segment() == tuple(runs[:SEGMENTED_RUNS])


@pytest.mark.parametrize(
    ("query", "segmented"),
    [
        ("What is the -@status:{archived} | * of $x?", None),
        ("billing-service-v2 ERR_CONN_RESET user_42", None),
        ("用户喜欢什么语言 python", {"用户喜欢什么语言": ["用户", "喜欢", "语言"]}),
        ("中文", None),
        (" ".join(f"word{n}" for n in range(100)), None),
    ],
)
def test_the_terms_are_those_of_the_keyword_query(
    query: str, segmented: dict[str, list[str]] | None
) -> None:
    assert QueryAnalysis.of(query, NOW).terms(segmented) == keyword_terms(query, segmented)


def test_a_question_naming_a_date() -> None:
    found = QueryAnalysis.of("What did Alice do in May 2023?", NOW)
    assert found.time_range is not None
    start = datetime.fromtimestamp(found.time_range.start, UTC).date().isoformat()
    end = datetime.fromtimestamp(found.time_range.end, UTC).date().isoformat()
    assert (start, end) == ("2023-05-01", "2023-06-01")
    assert not found.asks_time
    relative = QueryAnalysis.of("what did Bob fix last week?", NOW)
    assert relative.time_range is not None and relative.time_range.end <= NOW


def test_a_when_question() -> None:
    found = QueryAnalysis.of("When did Melanie go to the pottery workshop?", NOW)
    assert found.asks_time and found.time_range is None
    assert QueryAnalysis.of("他什么时候去的北京？", NOW).asks_time


@pytest.mark.parametrize(
    ("query", "past"),
    [
        ("what was the deploy window before?", True),
        ("how did the owner change", True),
        ("它以前是什么", True),
        ("where does alice live now?", False),
        ("what is the deploy window?", False),
    ],
)
def test_a_question_about_the_past(query: str, past: bool) -> None:
    assert QueryAnalysis.of(query, NOW).about_the_past is past


def test_the_time_signals_follow_the_settings() -> None:
    found = QueryAnalysis.of("When did Bob make pottery in May 2023?", NOW)
    on = TimeQuery.of(found, SearchSettings(search_date_slack_days=2))
    assert on.window == found.time_range and on.asks and on.active
    assert on.slack_s == 2 * 86_400.0 and (on.weight, on.answer_weight) == (0.2, 0.1)
    off = TimeQuery.of(found, SearchSettings(search_date_weight=0, search_time_answer_weight=0))
    assert off.window is None and not off.asks and not off.active
    dates_only = TimeQuery.of(found, SearchSettings(search_time_answer_weight=0))
    assert dates_only.window is not None and not dates_only.asks and dates_only.active
    plain = TimeQuery.of(QueryAnalysis.of("What does Melanie make?", NOW), SearchSettings())
    assert not plain.active


def test_a_question_asking_for_a_kind_with_members_widens_its_vector_and_terms() -> None:
    found = QueryAnalysis.of("What martial arts has John done?", NOW)
    assert "karate" in found.related and "jiu-jitsu" in found.related
    assert found.vector_text == " ".join((found.text, *found.related))
    terms = found.related_terms()
    assert "karate" in terms and "jiu-jitsu" not in terms  # plain words only
    plain = QueryAnalysis.of("What did John do last week?", NOW)
    assert plain.related == () and plain.related_terms() == []
    assert plain.vector_text == plain.text
