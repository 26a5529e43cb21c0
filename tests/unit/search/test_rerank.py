"""The re-rankers of a search (``search.rerank``), each alone, on hand-made hits."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hindsight_redis.core.checks import check_max_tokens
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.errors import InvalidQuery
from hindsight_redis.language.tokens import count_tokens
from hindsight_redis.search.analysis import QueryAnalysis, TimeQuery
from hindsight_redis.search.rerank.base import RerankContext
from hindsight_redis.search.rerank.budget import TokenBudget
from hindsight_redis.search.rerank.lead_in import LeadIn
from hindsight_redis.search.rerank.named_things import MEMBER_WEIGHT, NamedThings
from hindsight_redis.search.rerank.named_things import WEIGHT as NAMED_WEIGHT
from hindsight_redis.search.rerank.newer_first import NewerFirst
from hindsight_redis.search.rerank.speaker import BOTH_STEP, LIST_WEIGHT, SpeakerBoost
from hindsight_redis.search.rerank.speaker import POOL as SPEAKER_POOL
from hindsight_redis.search.rerank.speaker import WEIGHT as SPEAKER_WEIGHT
from hindsight_redis.search.rerank.speaker import pool_size as speaker_pool
from hindsight_redis.search.rerank.time_boost import POOL, TimeBoost, pool_size
from hindsight_redis.settings import SearchSettings

NOW = datetime(2024, 3, 14, 15, 0, tzinfo=UTC).timestamp()
MAY = datetime(2023, 5, 20, tzinfo=UTC).timestamp()
DAY = 86_400.0
DEFAULTS = SearchSettings()


def hit(
    memory_id: str,
    fused: float = 0.5,
    *,
    content: str = "",
    occurred_at: float | None = None,
    created_at: float = 1.0,
    conflicts: tuple[str, ...] = (),
    **scores: Any,
) -> SearchHit:
    return SearchHit(
        id=memory_id,
        content=content or memory_id,
        source="",
        agent_id="",
        session_id="",
        task_type="",
        tags=(),
        created_at=created_at,
        fused=fused,
        occurred_at=occurred_at,
        conflicts_with=conflicts,
        **scores,
    )


def context(
    query: str,
    *,
    top_k: int = 3,
    max_tokens: int | None = None,
    settings: SearchSettings = DEFAULTS,
) -> RerankContext:
    analysis = QueryAnalysis.of(query, NOW)
    time = TimeQuery.of(analysis, settings)
    return RerankContext(analysis, time, top_k, SearchFilters(), max_tokens)


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.id for h in hits]


# -- time boost ------------------------------------------------------------------------


async def test_the_time_boost_lifts_the_hits_of_the_range_named_and_cuts_to_top_k() -> None:
    hits = [
        hit("best", 0.9),
        hit("june", 0.85, occurred_at=MAY + 40 * DAY),  # past the slack after May
        hit("may", 0.8, occurred_at=MAY),
        hit("early_june", 0.1, occurred_at=MAY + 5 * DAY),  # within the slack
    ]
    ranked = await TimeBoost().rerank(hits, context("What did Alice do in May 2023?"))
    assert ids(ranked) == ["may", "best", "june"]
    assert ranked[0].fused == pytest.approx(0.8 + DEFAULTS.search_date_weight)
    assert ranked[1] is hits[0]  # no gain: the same hit
    wider = await TimeBoost().rerank(hits, context("What did Alice do in May 2023?", top_k=4))
    assert wider[-1].id == "early_june"
    assert wider[-1].fused == pytest.approx(0.1 + DEFAULTS.search_date_weight)


async def test_the_time_boost_lifts_hits_telling_a_time_for_a_when_question() -> None:
    hits = [
        hit("a", 0.9, content="Melanie loves pottery and painting"),
        hit("b", 0.85, content="Last Fri I finally took my kids to a pottery workshop"),
        hit("c", 0.5, content="pottery is calming"),
    ]
    when = context("When did Melanie go to the pottery workshop?", top_k=2)
    ranked = await TimeBoost().rerank(hits, when)
    assert ids(ranked) == ["b", "a"]
    assert ranked[0].fused == pytest.approx(0.85 + DEFAULTS.search_time_answer_weight)


async def test_without_a_time_signal_the_time_boost_only_cuts() -> None:
    hits = [hit("a", 0.9, occurred_at=MAY), hit("b", 0.8), hit("c", 0.7)]
    assert await TimeBoost().rerank(hits, context("What does Melanie make?", top_k=2)) == hits[:2]
    off = SearchSettings(search_date_weight=0, search_time_answer_weight=0)
    dated = context("When did Alice move in May 2023?", top_k=2, settings=off)
    assert await TimeBoost().rerank(hits, dated) == hits[:2]


async def test_equal_boosted_scores_keep_the_fused_order() -> None:
    hits = [hit("a", 0.5, occurred_at=MAY), hit("b", 0.5, occurred_at=MAY), hit("c", 0.6)]
    ranked = await TimeBoost().rerank(hits, context("What happened in May 2023?"))
    assert ids(ranked) == ["a", "b", "c"]


def test_fusion_keeps_a_pool_for_the_time_boost_only_when_it_can_change_the_order() -> None:
    dated = context("What did Alice do in May 2023?").time
    plain = context("What did Alice do?").time
    assert pool_size(2, dated, depth=100) == POOL * 2
    assert pool_size(2, dated, depth=5) == 5  # no deeper than the legs
    assert pool_size(10, dated, depth=5) == 10  # never fewer than asked for
    assert pool_size(2, plain, depth=100) == 2


# -- newer first -----------------------------------------------------------------------


async def test_newer_first_ranks_the_newer_of_a_conflicting_pair_first() -> None:
    hits = [
        hit("old", created_at=1.0, conflicts=("new",)),
        hit("x", created_at=5.0),
        hit("new", created_at=2.0, conflicts=("old",)),
    ]
    ranked = await NewerFirst().rerank(hits, context("what is the deploy window?"))
    assert ids(ranked) == ["new", "old", "x"]


async def test_newer_first_keeps_the_order_for_a_question_about_the_past() -> None:
    hits = [
        hit("old", created_at=1.0, conflicts=("new",)),
        hit("new", created_at=2.0, conflicts=("old",)),
    ]
    for past in ("what was the deploy window before?", "部署窗口以前是什么"):
        assert await NewerFirst().rerank(hits, context(past)) == hits


async def test_newer_first_keeps_a_far_better_older_memory_first() -> None:
    old = hit("old", created_at=1.0, conflicts=("new",), vector=1.0, bm25=9.0)
    worse = hit("new", created_at=2.0, conflicts=("old",), vector=0.8, bm25=9.0)
    close = hit("new", created_at=2.0, conflicts=("old",), vector=0.98, bm25=8.5)
    now = context("what is the deploy window?")
    assert ids(await NewerFirst().rerank([old, worse], now)) == ["old", "new"]
    assert ids(await NewerFirst().rerank([old, close], now)) == ["new", "old"]


# -- token budget ----------------------------------------------------------------------


async def test_the_token_budget_keeps_a_prefix_of_the_ranking() -> None:
    texts = ["green tea every morning", "espresso after lunch", "a long " * 40 + "story"]
    hits = [hit(f"h{n}", content=t) for n, t in enumerate(texts)]
    two = count_tokens(texts[0]) + count_tokens(texts[1])
    assert ids(await TokenBudget().rerank(hits, context("tea", max_tokens=two))) == ["h0", "h1"]
    assert ids(await TokenBudget().rerank(hits, context("tea", max_tokens=two - 1))) == ["h0"]
    assert await TokenBudget().rerank(hits, context("tea", max_tokens=1)) == []
    assert await TokenBudget().rerank(hits, context("tea")) == hits  # no budget: all


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "10"])
def test_a_token_budget_is_a_positive_integer(bad: object) -> None:
    with pytest.raises(InvalidQuery, match="max_tokens"):
        check_max_tokens(bad)
    assert check_max_tokens(None) is None and check_max_tokens(7) == 7


# -- lead-in (its reading of Redis: tests/integration/test_time_search.py) -------------


class NoRedis:
    """Any use of Redis fails the test: the lead-in must not read for these searches."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the lead-in used redis.{name}")


async def test_the_lead_in_reads_nothing_unless_the_query_asks_for_a_time() -> None:
    lead_in = LeadIn(NoRedis(), Keys("hs", "ns"), "idx")  # type: ignore[arg-type]
    hits = [hit("a"), hit("b")]
    assert await lead_in.rerank(hits, context("What did the car hit?")) == hits
    when = context("When did the car hit them?")
    assert await lead_in.rerank([], when) == []
    assert await lead_in.rerank(hits, when) == hits  # the best hit has no session
    off = context(
        "When did the car hit them?", settings=SearchSettings(search_time_answer_weight=0)
    )
    assert await lead_in.rerank(hits, off) == hits


# -- speaker ------------------------------------------------------------------------


async def test_the_turns_of_the_speaker_the_question_names_rank_higher() -> None:
    hits = [
        hit("other", 0.80, content="Caroline: my kids love the beach too"),
        hit("named", 0.78, content="Melanie: the kids love dinosaurs"),
        hit("far", 0.50, content="Melanie: we went camping"),
    ]
    ranked = await SpeakerBoost().rerank(hits, context("What do Melanie's kids like?"))
    assert [h.id for h in ranked] == ["named", "other", "far"]
    assert ranked[0].fused == pytest.approx(0.78 + SPEAKER_WEIGHT)  # the score carries the gain
    # a hit far below is not lifted over a much better one
    assert ranked[-1].id == "far"


async def test_no_name_or_no_label_changes_nothing() -> None:
    hits = [hit("a", 0.8, content="Caroline: hi"), hit("b", 0.7, content="Melanie: the kids")]
    assert await SpeakerBoost().rerank(hits, context("what do the kids like?")) == hits
    unlabeled = [hit("a", 0.8, content="kids like pizza"), hit("b", 0.7, content="Melanie said")]
    assert await SpeakerBoost().rerank(unlabeled, context("What does Melanie like?")) == unlabeled


async def test_a_chinese_label_is_named_by_the_query_text() -> None:
    hits = [hit("a", 0.8, content="李娜: 我喜欢爬山"), hit("b", 0.79, content="张伟: 我喜欢游泳")]
    ranked = await SpeakerBoost().rerank(hits, context("张伟喜欢什么运动"))
    assert [h.id for h in ranked] == ["b", "a"]


async def test_a_question_about_both_people_reaches_the_turns_of_each() -> None:
    hits = [
        hit("j1", 0.90, content="Joanna: I watched Little Women"),
        hit("j2", 0.89, content="Joanna: the trilogy was awesome"),
        hit("j3", 0.88, content="Joanna: movies are my escape"),
        hit("n1", 0.87, content="Nate: I watched Little Women too"),
    ]
    ranked = await SpeakerBoost().rerank(
        hits, context("What movies have both Joanna and Nate seen?")
    )
    assert ids(ranked) == ["j1", "n1", "j2", "j3"]
    by_id = {h.id: h.fused for h in ranked}
    # a question asking for things of a kind ("movies") weighs the speaker's turns more
    assert by_id["j3"] == pytest.approx(0.88 + LIST_WEIGHT - 2 * BOTH_STEP)
    assert by_id["n1"] == pytest.approx(0.87 + LIST_WEIGHT)  # the first of its speaker


async def test_no_both_or_one_named_speaker_keeps_the_order() -> None:
    hits = [
        hit("j1", 0.90, content="Joanna: I watched Little Women"),
        hit("j2", 0.89, content="Joanna: the trilogy was awesome"),
        hit("n1", 0.87, content="Nate: I watched Little Women too"),
    ]
    plain = await SpeakerBoost().rerank(hits, context("What movies have Joanna and Nate seen?"))
    assert ids(plain) == ["j1", "j2", "n1"]
    one = [h for h in hits if h.id != "n1"]
    alone = await SpeakerBoost().rerank(one, context("What movies have both Joanna and Nate seen?"))
    assert ids(alone) == ["j1", "j2"]


async def test_a_question_asking_for_things_of_a_kind_weighs_the_speaker_more() -> None:
    hits = [
        hit("other", 0.90, content="Tim: John, you should read The Hobbit"),
        hit("named", 0.80, content="John: I finished that fantasy series last week"),
    ]
    listing = await SpeakerBoost().rerank(hits, context("What books has John read?"))
    assert ids(listing) == ["named", "other"]
    assert listing[0].fused == pytest.approx(0.80 + LIST_WEIGHT)
    single = await SpeakerBoost().rerank(hits, context("What book did John like?"))
    assert ids(single) == ["other", "named"]  # one thing: the usual weight
    assert single[1].fused == pytest.approx(0.80 + SPEAKER_WEIGHT)


def test_fusion_keeps_more_candidates_only_when_the_query_names_someone() -> None:
    named = QueryAnalysis.of("What do Melanie's kids like?", NOW)
    plain = QueryAnalysis.of("what do the kids like?", NOW)
    assert named.names == ("Melanie",) and plain.names == ()
    assert speaker_pool(10, named, depth=100) == SPEAKER_POOL * 10
    assert speaker_pool(10, named, depth=20) == 20  # no deeper than the legs
    assert speaker_pool(10, plain, depth=100) == 10


def test_fusion_keeps_more_candidates_when_the_query_asks_for_a_kind() -> None:
    kind = QueryAnalysis.of("which cities are the best for a weekend?", NOW)
    assert kind.names == () and kind.kind is not None
    assert speaker_pool(10, kind, depth=100) == SPEAKER_POOL * 10


# -- named things ------------------------------------------------------------------------


async def test_a_question_asking_for_named_things_lifts_the_memories_naming_one() -> None:
    hits = [
        hit("plain", 0.82, content="John: exploring new places is my favorite thing"),
        hit("city", 0.80, content="John: I was in Chicago, it was awesome!"),
        hit("title", 0.70, content='John: we watched "Little Women" there'),
        hit("thanks", 0.81, content="John: Thanks, Tim! Loved the trip."),
    ]
    ranked = await NamedThings().rerank(hits, context("Which cities has John been to?"))
    assert ids(ranked) == ["city", "plain", "thanks", "title"]
    assert ranked[0].fused == pytest.approx(0.80 + NAMED_WEIGHT)
    # an addressee is no name of a thing; nor is the person the question names
    assert {h.id: h.fused for h in ranked}["thanks"] == pytest.approx(0.81)


async def test_a_kind_without_names_or_no_kind_keeps_the_order() -> None:
    hits = [
        hit("plain", 0.82, content="Joanna: hiking clears my head"),
        hit("city", 0.80, content="Joanna: I hiked near Denver"),
    ]
    for question in ("What skills does Joanna have?", "When did Joanna go hiking?"):
        assert await NamedThings().rerank(hits, context(question)) == hits


async def test_a_question_asking_for_a_kind_lifts_the_memories_naming_a_member() -> None:
    hits = [
        hit("music", 0.82, content="Melanie: music is such a comfort to me"),
        hit("violin", 0.80, content="Melanie: I've been playing my violin every night"),
        hit("thanks", 0.81, content="Melanie: Thanks, Caroline! Playing is fun."),
    ]
    ranked = await NamedThings().rerank(hits, context("What instruments does Melanie play?"))
    assert ids(ranked) == ["violin", "music", "thanks"]
    assert ranked[0].fused == pytest.approx(0.80 + MEMBER_WEIGHT)
    assert [h.fused for h in ranked[1:]] == [0.82, 0.81]


async def test_a_named_kind_with_members_adds_both_weights() -> None:
    hits = [
        hit("plain", 0.8, content="Nate: I love board games, honestly"),
        hit("both", 0.7, content="Nate: we played chess and Catan all night"),
    ]
    ranked = await NamedThings().rerank(hits, context("What board games has Nate played?"))
    assert ids(ranked) == ["both", "plain"]
    assert ranked[0].fused == pytest.approx(0.7 + NAMED_WEIGHT + MEMBER_WEIGHT)
