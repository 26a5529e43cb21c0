"""Dates and relative times in queries (``when.py``), relative to a fixed now."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.answer_type import asks_time, tells_time
from hindsight_redis.language.when import parse_timestamp, time_range, time_ranges
from hindsight_redis.search.analysis import QueryAnalysis, TimeQuery
from hindsight_redis.search.rerank.time_boost import boost, pool_size
from hindsight_redis.settings import SearchSettings, Settings

NOW = datetime(2024, 3, 14, 15, 0, tzinfo=UTC).timestamp()  # a Thursday
WEIGHT = SearchSettings().search_date_weight
ANSWER_WEIGHT = SearchSettings().search_time_answer_weight


def time_query(query: str, now: float) -> TimeQuery:
    """The time signals of ``query`` under the default settings."""
    return TimeQuery.of(QueryAnalysis.of(query, now), SearchSettings())


def configured(query: str, now: float, settings: Settings) -> TimeQuery:
    """The time signals of ``query`` under ``settings``."""
    return TimeQuery.of(QueryAnalysis.of(query, now), settings.search)


def _days(query: str, now: float = NOW) -> tuple[str, str] | None:
    """The range ``query`` names as (first day, day after), ISO dates."""
    found = time_range(query, now)
    if found is None:
        return None
    first, after = (
        datetime.fromtimestamp(t, UTC).date().isoformat() for t in (found.start, found.end)
    )
    return first, after


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Alice do in May 2023?", ("2023-05-01", "2023-06-01")),
        ("who did she meet on 8 May?", ("2023-05-08", "2023-05-09")),  # the latest 8 May
        ("who did she meet on 8 March?", ("2024-03-08", "2024-03-09")),
        ("dinner on May 3, 2023", ("2023-05-03", "2023-05-04")),
        ("the 8th of May 2023", ("2023-05-08", "2023-05-09")),
        ("the deploy of 2023-05-08", ("2023-05-08", "2023-05-09")),
        ("Dec 2022 report", ("2022-12-01", "2023-01-01")),
        ("what happened in 2023", ("2023-01-01", "2024-01-01")),
        ("what did I do in may", ("2023-05-01", "2023-06-01")),
        ("yesterday's meeting", ("2024-03-13", "2024-03-14")),
        ("the day before yesterday", ("2024-03-12", "2024-03-13")),
        ("what did we decide last week", ("2024-03-04", "2024-03-11")),  # Monday to Monday
        ("last month", ("2024-02-01", "2024-03-01")),
        ("two weeks ago", ("2024-02-26", "2024-03-04")),
        ("a couple of weeks ago", ("2024-02-26", "2024-03-04")),
        ("3 days ago", ("2024-03-11", "2024-03-12")),
        ("from March to June 2023", ("2023-03-01", "2023-07-01")),  # the span of both
        ("去年我们去了哪里", ("2023-01-01", "2024-01-01")),
        ("上周的会议", ("2024-03-04", "2024-03-11")),
        ("我昨天去了商店", ("2024-03-13", "2024-03-14")),
        ("两个月前", ("2024-01-01", "2024-02-01")),
        ("三天前", ("2024-03-11", "2024-03-12")),
        ("2023年5月8日的会议", ("2023-05-08", "2023-05-09")),
        ("二〇二二年", ("2022-01-01", "2023-01-01")),
        ("十二月份", ("2023-12-01", "2024-01-01")),
        ("gestern", ("2024-03-13", "2024-03-14")),
        ("vor zwei Wochen", ("2024-02-26", "2024-03-04")),
        ("am 8. Mai 2023", ("2023-05-08", "2023-05-09")),
        ("la semaine dernière", ("2024-03-04", "2024-03-11")),
        ("le 1er mai", ("2023-05-01", "2023-05-02")),
        ("el mes pasado", ("2024-02-01", "2024-03-01")),
        ("hace 3 días", ("2024-03-11", "2024-03-12")),
    ],
)
def test_dates_and_relative_times_become_ranges(query: str, expected: tuple[str, str]) -> None:
    assert _days(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "what is the weather",
        "May I ask you something?",
        "this may help with the march on Rome",
        "port 8080 refuses connections",
        "the v2023 release notes",
        "ich bin hier",
        "When did Caroline go to the LGBTQ support group?",
        "",
    ],
)
def test_text_without_a_date_names_no_range(query: str) -> None:
    assert time_range(query, NOW) is None


def test_an_impossible_day_is_no_day() -> None:
    assert _days("on 30 February") is None
    assert _days("on 30 February 2023") == ("2023-02-01", "2023-03-01")  # its month still


def test_ranges_are_in_text_order_and_a_date_is_read_once() -> None:
    found = time_ranges("from May 2023 until yesterday", NOW)
    assert [r.text for r in found] == ["May 2023", "yesterday"]  # not "May 2023" and "2023"
    assert NOW - 86400 in found[1] and NOW not in found[1]


def test_calendar_units_follow_the_time_zone() -> None:
    tokyo = timezone(timedelta(hours=9))
    late = datetime(2024, 3, 14, 20, 0, tzinfo=UTC).timestamp()  # already the 15th in Tokyo
    found = time_range("yesterday", late, tokyo)
    assert found is not None
    assert datetime.fromtimestamp(found.start, tokyo).date() == date(2024, 3, 14)


def test_timestamps_are_seconds_or_iso_dates() -> None:
    assert parse_timestamp(" 1683554160.5 ") == 1683554160.5
    assert parse_timestamp("2023-05-08") == datetime(2023, 5, 8, tzinfo=UTC).timestamp()
    assert (
        parse_timestamp("2023-05-08T10:00:00+02:00")
        == datetime(2023, 5, 8, 8, tzinfo=UTC).timestamp()
    )
    with pytest.raises(ValueError, match="neither unix seconds nor an ISO date"):
        parse_timestamp("8 May")


def _hit(memory_id: str, fused: float, occurred_at: float | None) -> SearchHit:
    return SearchHit(
        id=memory_id,
        content=memory_id,
        source="",
        agent_id="",
        session_id="",
        task_type="",
        tags=(),
        created_at=0.0,
        fused=fused,
        occurred_at=occurred_at,
    )


def test_hits_that_happened_in_the_query_range_rank_higher() -> None:
    may = datetime(2023, 5, 20, tzinfo=UTC).timestamp()
    hits = [_hit("best", 0.9, None), _hit("june", 0.85, may + 40 * 86400), _hit("may", 0.8, may)]
    hits.append(_hit("early_june", 0.1, may + 15 * 86400))  # within the slack after May
    window = time_query("what did Alice do in May 2023?", NOW)
    plain = time_query("what did Alice do?", NOW)
    assert pool_size(2, window, depth=100) == 8 and pool_size(2, plain, depth=100) == 2
    ranked = boost(hits, window, 3)
    assert [h.id for h in ranked] == ["may", "best", "june"]
    assert ranked[0].fused == pytest.approx(0.8 + WEIGHT) and ranked[1] is hits[0]
    assert [h.id for h in boost(hits, plain, 3)] == ["best", "june", "may"]


def test_a_question_asking_when_prefers_hits_that_say_when() -> None:
    hits = [
        _hit("Melanie loves pottery and painting", 0.9, None),
        _hit("Last Fri I finally took my kids to a pottery workshop", 0.85, None),
        _hit("pottery is calming", 0.5, None),
    ]
    asks = time_query("When did Melanie go to the pottery workshop?", NOW)
    assert asks.asks and asks.window is None and pool_size(2, asks, depth=100) == 8
    ranked = boost(hits, asks, 2)
    assert [h.fused for h in ranked] == [pytest.approx(0.85 + ANSWER_WEIGHT), 0.9]
    assert boost(hits, time_query("What does Melanie make?", NOW), 2) == hits[:2]


@pytest.mark.parametrize(
    "question",
    [
        "When did Caroline go to the support group?",
        "How long has Melanie been painting?",
        "What year did John move?",
        "Since when does the gateway fail?",
        "Wann war das Treffen?",
        "Quand est-il parti ?",
        "¿Cuándo fue la reunión?",
        "他什么时候去的北京？",
        "你学了多久？",
        "明天几点开会？",
        "钢琴课是周几？",
    ],
)
def test_questions_that_ask_for_a_time(question: str) -> None:
    assert asks_time(question)


@pytest.mark.parametrize(
    "question",
    [
        "What does Melanie paint?",
        "Who owns the billing dashboard?",
        "Whenever is a word",
        "他喜欢什么？",
    ],
)
def test_questions_that_do_not(question: str) -> None:
    assert not asks_time(question)


@pytest.mark.parametrize(
    ("text", "tells"),
    [
        ("Last Fri I finally took my kids to a pottery workshop", True),
        ("that roadtrip this past weekend was insane!", True),
        ("I've known these friends for 4 years, since I moved", True),
        ("Seven years now, and I've finally found my real muses", True),
        ("We went camping last summer", True),
        ("The deploy failed two days ago", True),
        ("I moved here in 2019", True),
        ("Ich war gestern dort", True),
        ("我去年去了北京", True),
        ("截止日期是六月三十日", True),
        ("每天中午十二点半吃药", True),
        ("体检约在5月20号", True),
        ("会议最好控制在半小时以内", True),
        ("咖啡里只加一点燕麦奶", False),  # 一点: "a little"
        ("王芳对花生过敏", False),
        ("Bob prefers espresso coffee after lunch", False),
        ("Alice drinks green tea every morning before standup", False),
        ("The billing service listens on port 8080", False),
    ],
)
def test_texts_that_tell_a_time(text: str, tells: bool) -> None:
    assert tells_time(text) is tells


def test_the_time_signals_follow_their_settings() -> None:
    may = datetime(2023, 5, 20, tzinfo=UTC).timestamp()
    hits = [_hit("Bob loves pottery", 0.9, None), _hit("Last Fri I made pottery", 0.85, may)]
    question = "When did Bob make pottery in May 2023?"
    on = configured(question, NOW, Settings())
    assert on.window is not None and on.asks
    assert boost(hits, on, 1)[0].fused == pytest.approx(0.85 + WEIGHT + ANSWER_WEIGHT)
    off = configured(question, NOW, Settings(search_date_weight=0, search_time_answer_weight=0))
    assert not off.active and boost(hits, off, 1) == hits[:1]
    narrow = configured("what did Bob do in April 2023?", NOW, Settings(search_date_slack_days=0))
    assert boost(hits, narrow, 1) == hits[:1]  # 20 May is outside April
    wide = configured("what did Bob do in April 2023?", NOW, Settings(search_date_slack_days=30))
    assert boost(hits, wide, 1)[0].id == hits[1].id  # within 30 days after April
