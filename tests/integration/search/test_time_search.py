"""Candidates a question about time needs and its legs miss, on a real Redis: the legs
over the range a query names (``plan.window_expr``), the turns that told when
(``rerank.lead_in``)."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, SearchHit, Settings
from hindsight_redis.core.models import SearchFilters
from hindsight_redis.search.analysis import QueryAnalysis, TimeQuery
from hindsight_redis.search.rerank.base import RerankContext
from hindsight_redis.search.rerank.lead_in import LeadIn
from tests.integration.helpers import Drain, open_index_env

JAN_2022 = 1642075200.0  # 2022-01-13 12:00 UTC
JUNE_2023 = 1686340500.0  # 2023-06-09 19:55 UTC
DAY = 86_400.0


_PEOPLE = (
    "her sister",
    "the coach",
    "a neighbour",
    "her boss",
    "the teacher",
    "an old friend",
    "her cousin",
    "the mayor",
    "a reporter",
    "her mentor",
    "the doctor",
    "a stranger",
    "her uncle",
    "the pilot",
    "a student",
    "her aunt",
    "the chef",
    "a dancer",
    "her landlord",
    "the nurse",
)
_QUESTION = "What major achievement did Joanna accomplish in January 2022?"


async def _joanna(client: AsyncMemoryClient, drain: Drain) -> str:
    """Two memories that match ``_QUESTION``'s words well, twenty only by the name, all
    from June 2023; and the one that happened in January 2022, which matches by the name
    too, less well than those twenty (a longer text). Its id."""
    others = [
        "Joanna says a major achievement is hard to accomplish",
        "To accomplish a major achievement, Joanna trains daily",
        *(f"Joanna had lunch with {p} on a rainy day" for p in _PEOPLE),
    ]
    target = (
        "After three long years of evenings at the kitchen table, Joanna finally has her"
        " first full screenplay finished and sent out to the studios"
    )
    receipts = await client.write_many(
        [{"content": t, "occurred_at": JUNE_2023 + n * DAY} for n, t in enumerate(others)]
        + [{"content": target, "occurred_at": JAN_2022}]
    )
    assert (await drain()).indexed == 23
    return receipts[-1].id


async def test_a_question_naming_a_month_finds_what_happened_then_in_other_words(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    # The legs' depth (4 x top_k) stops before the January memory, and only the legs run
    # on the range's memories bring it in, where its date lifts it.
    target = await _joanna(client, drain)
    few = client.settings.model_copy(update={"search_candidates": 3})
    async with AsyncMemoryClient(few) as ranged:
        hits = {h.id: h for h in await ranged.search(_QUESTION, top_k=3)}
        assert target in hits and hits[target].occurred_at == JAN_2022
    without = few.model_copy(update={"search_date_weight": 0.0})  # the range is not used
    async with AsyncMemoryClient(without) as plain:
        assert target not in [h.id for h in await plain.search(_QUESTION, top_k=3)]


async def test_only_the_range_legs_bring_in_a_memory_the_words_rank_too_low(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    # Keyword legs alone: the twenty lunches outrank the January memory on the name, so
    # the plain leg (12 rows) never returns it; the date boost is on either way, and can
    # only lift what a leg returned. Without the legs over January 2022, it is not found.
    target = await _joanna(client, drain)
    few = client.settings.model_copy(update={"search_candidates": 3})
    async with AsyncMemoryClient(few) as ranged:
        found = await ranged.search(_QUESTION, top_k=3, mode="keyword")
        assert target in [h.id for h in found]
        words_only = _QUESTION.removesuffix(" in January 2022?")
        unranged = await ranged.search(words_only, top_k=3, mode="keyword")
        assert target not in [h.id for h in unranged]  # no range named: not among them


@pytest.mark.parametrize("occurred_at", [JUNE_2023, None])
async def test_a_when_question_gets_the_turn_that_told_when_right_after_the_details(
    client: AsyncMemoryClient, drain: Drain, occurred_at: float | None
) -> None:
    turns = [
        "Something scary happened to my family yesterday on the drive home",
        "A car ran a red light and hit our car, but the kids are okay",
        "The red light at that crossing has caused a car crash before",
        "A red light camera would stop the car crashes at that crossing",
    ]
    receipts = await client.write_many(
        [{"content": t, "session_id": "s1", "occurred_at": occurred_at} for t in turns]
        + [{"content": "My car was at the garage yesterday", "session_id": "s2"}]
    )
    assert (await drain()).indexed == 5
    told_when, details = receipts[0].id, receipts[1].id
    hits = await client.search("When did the car run the red light and hit them?", top_k=2)
    assert [h.id for h in hits] == [details, told_when]
    assert hits[1].occurred_at == occurred_at
    # Not a question about time: the turns are ranked by the query's words alone.
    hits = await client.search("Which car ran the red light and hit them?", top_k=2)
    assert hits[0].id == details and told_when not in [h.id for h in hits]


def _hit(
    memory_id: str,
    fused: float,
    *,
    session_id: str = "",
    created_at: float = 0.0,
    occurred_at: float | None = None,
    content: str = "",
) -> SearchHit:
    return SearchHit(
        id=memory_id,
        content=content or memory_id,
        source="",
        agent_id="",
        session_id=session_id,
        task_type="",
        tags=(),
        created_at=created_at,
        fused=fused,
        occurred_at=occurred_at,
    )


async def test_the_lead_in_alone_moves_the_turns_that_told_when_after_the_best_hit(
    settings: Settings, redis: Redis
) -> None:
    env = await open_index_env(redis, settings)
    at = 1_700_000_000.0  # when the turns were written, a second apart
    turns = [  # (id, text, session, occurred_at, created_at)
        ("other_day", "Two days ago I drove home", "s1", JUNE_2023 - 5 * DAY, at - 10),
        ("told", "Something scary happened to my family yesterday", "s1", JUNE_2023, at),
        ("plain", "We were all in the car, the kids too", "s1", JUNE_2023, at + 1),
        ("elsewhere", "Yesterday my car was at the garage", "s2", JUNE_2023, at + 1.5),
        ("details", "A car ran a red light and hit our car", "s1", JUNE_2023, at + 2),
        ("after", "Last week we bought a new car", "s1", JUNE_2023, at + 3),
    ]
    for memory_id, text, session, occurred, created in turns:
        await env.put(memory_id, text, session_id=session, occurred_at=occurred, created_at=created)
    await env.indexed(len(turns))
    best = _hit("details", 0.9, session_id="s1", created_at=at + 2, occurred_at=JUNE_2023)
    hits = [best, _hit("x", 0.5), _hit("y", 0.4)]

    def context(query: str) -> RerankContext:
        analysis = QueryAnalysis.of(query, at)
        return RerankContext(
            analysis, TimeQuery.of(analysis, env.settings.search), 3, SearchFilters()
        )

    lead_in = LeadIn(env.redis, env.keys, env.info.alias)
    # the two turns written just before it in its session at its moment are read; the
    # one that tells a time follows it, at its score; as many hits as before
    ranked = await lead_in.rerank(hits, context("When did the car hit them?"))
    assert [h.id for h in ranked] == ["details", "told", "x"]
    assert ranked[1].fused == 0.9 and ranked[1].content.startswith("Something scary")
    # already among the hits: moved up, not repeated
    told = _hit("told", 0.1, content=turns[1][1])
    ranked = await lead_in.rerank([*hits, told], context("When did it happen?"))
    assert [h.id for h in ranked] == ["details", "told", "x", "y"]
    assert await lead_in.rerank(hits, context("What did the car hit?")) == hits
    assert [type(r).__name__ for r in env.searcher.rerankers] == [
        "ChineseRerank",
        "SpeakerBoost",
        "NamedThings",
        "TimeBoost",
        "LeadIn",
        "NewerFirst",
        "TokenBudget",
    ]
