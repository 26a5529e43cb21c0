"""LLM spend: the day's key, the budget's arithmetic, usage from litellm's real responses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.errors import ConfigError
from hindsight_redis.ops.render import spend_text
from hindsight_redis.pipeline.stages.base import Candidate, per_namespace
from hindsight_redis.providers.litellm_import import load_litellm
from hindsight_redis.providers.llm import LLMClient
from hindsight_redis.providers.spend import (
    Charge,
    Spend,
    SpendBudget,
    SpendLedger,
    charged_to,
    current_charge,
    day_of,
    usage_of,
)
from hindsight_redis.settings import Settings


def test_the_day_is_the_utc_day() -> None:
    assert day_of(0) == "1970-01-01"
    assert day_of(86_399.9) == "1970-01-01" and day_of(86_400) == "1970-01-02"
    assert Keys("p", "ns").llm_spend("2026-12-03") == "p:{ns}:llm-spend:2026-12-03"
    assert Keys("p", "ns").llm_spend_total == "p:{ns}:llm-spend:total"


def test_budget_arithmetic() -> None:
    assert SpendBudget().unlimited and not SpendBudget().reached(10**12, 10**6)
    tokens = SpendBudget(tokens=100)
    assert not tokens.reached(99, 1e6) and tokens.reached(100, 0.0)
    usd = SpendBudget(usd=0.5)
    assert not usd.reached(10**9, 0.49) and usd.reached(0, 0.5)
    both = SpendBudget(tokens=100, usd=0.5)
    assert both.reached(100, 0.0) and both.reached(0, 0.5) and not both.reached(99, 0.49)
    assert SpendBudget.of(Settings(llm_daily_tokens=7, llm_daily_usd=1.5).llm) == SpendBudget(
        7, 1.5
    )


@pytest.mark.parametrize("bad", [{"llm_daily_tokens": -1}, {"llm_daily_usd": -0.01}])
def test_a_negative_budget_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        Settings(**bad)


def test_each_stage_s_model_defaults_to_llm_model() -> None:
    llm = Settings(llm_model="gpt-4o", score_model="gpt-4o-mini").llm
    assert llm.model_of("score") == "gpt-4o-mini"
    assert llm.model_of("summary") == llm.model_of("judge") == "gpt-4o"
    assert Settings(judge_model="gpt-4o-mini").llm.model_of("score") is None


def test_a_spend_hash_reads_back() -> None:
    raw = {
        b"tokens": b"90",
        b"usd": b"0.0000135",
        b"calls": b"3",
        b"unpriced": b"2",
        b"tokens:score": b"30",
        b"usd:score": b"0.0000135",
        b"calls:score": b"1",
        b"skipped:score": b"4",
        b"tokens:poisoning": b"60",
        b"calls:poisoning": b"2",
    }
    spend = Spend.from_hash(raw)
    assert (spend.tokens, spend.calls, spend.unpriced, spend.skipped) == (90, 3, 2, 4)
    shown = spend.as_dict(SpendBudget(tokens=90))
    assert shown["budget_reached"] and shown["budget"] == {"tokens": 90, "usd": 0.0}
    assert shown["stages"]["score"] == {"calls": 1, "skipped": 4, "tokens": 30, "usd": 1.35e-05}
    line = spend_text(shown)
    assert line.startswith("90 tokens of 90, $0.000013, 3 calls (2 unpriced); budget reached")
    assert spend_text(Spend().as_dict(SpendBudget())).endswith("; no budget")


def _response(model: str) -> Any:
    litellm = load_litellm()
    return litellm.completion(
        model=model, messages=[{"role": "user", "content": "hi"}], mock_response="ok"
    )


def test_usage_and_cost_from_litellm_s_own_response() -> None:
    litellm = load_litellm()
    priced = usage_of(_response("gpt-4o-mini"), litellm)
    assert (priced.prompt_tokens, priced.completion_tokens, priced.tokens) == (10, 20, 30)
    assert priced.usd == pytest.approx(1.35e-05)
    unpriced = usage_of(_response("openai/house-model"), litellm)
    assert unpriced.tokens == 30 and unpriced.usd is None


def test_the_charge_follows_the_tasks_started_under_it() -> None:
    seen: dict[str, Charge | None] = {}

    async def note(label: str) -> None:
        await asyncio.sleep(0)
        seen[label] = current_charge()

    async def main() -> None:
        with charged_to("a", "score"):
            await asyncio.gather(note("a1"), note("a2"))
        await note("outside")

    asyncio.run(main())
    assert seen == {"a1": Charge("a", "score"), "a2": Charge("a", "score"), "outside": None}


def test_per_namespace_charges_each_namespace_and_keeps_the_order() -> None:
    def cand(ns: str, text: str) -> Candidate:
        return Candidate("1-0", MemoryEvent(event_id=text, namespace=ns, content=text), text)

    batch = [cand("a", "1"), cand("b", "2"), cand("a", "3")]

    async def run(group: list[Candidate]) -> list[str]:
        charge = current_charge()
        assert charge is not None
        return [f"{charge.namespace}/{charge.stage}:{c.content}" for c in group]

    got = asyncio.run(per_namespace("score", batch, run))
    assert got == ["a/score:1", "b/score:2", "a/score:3"]


def test_a_client_without_a_connected_ledger_calls_and_counts_nothing() -> None:
    # Before a worker attaches it (or in a library's own use), the ledger allows every call.
    ledger = SpendLedger(SpendBudget(tokens=1))
    llm = Settings(llm_model="gpt-4o-mini", llm_max_retries=0).llm
    client = LLMClient(llm, ledger=ledger, mock_response="fine")

    async def main() -> str:
        with charged_to("a", "score"):
            return await client.complete_text("system", "user")

    assert asyncio.run(main()) == "fine"
    cheap = client.for_model("gpt-3.5-turbo")
    assert cheap.model == "gpt-3.5-turbo" and cheap.ledger is ledger
    assert client.for_model(None) is client and client.model == "gpt-4o-mini"


class _Spent:
    """A ledger whose namespace has spent its day: every call is refused and counted."""

    def __init__(self) -> None:
        self.skips: list[Charge] = []

    async def allows(self, namespace: str) -> bool:
        return False

    async def skipped(self, charge: Charge) -> None:
        self.skips.append(charge)


def test_past_the_budget_each_stage_says_its_stand_in_ran_and_no_call_is_made() -> None:
    from hindsight_redis.pipeline.stages.dedup import LLMConflictJudge, judged
    from hindsight_redis.pipeline.stages.scoring import LLMScorer, ScoreStage
    from hindsight_redis.pipeline.stages.summarize import LLMSummarizer, SummarizeStage
    from hindsight_redis.trust.poisoning import LLMPoisonJudge

    ledger = _Spent()
    spent: Any = ledger  # duck-typed: the client calls allows() and skipped()
    llm = Settings(llm_model="gpt-4o-mini", llm_max_retries=0).llm
    # A call that reached litellm would raise: the budget must stop it before.
    client = LLMClient(llm, ledger=spent, mock_response=Exception("must not be called"))
    fact = "I moved to Lisbon in March 2024 and work at the Alfama office"
    long = " ".join([fact] * 40)

    def cand(text: str) -> Candidate:
        return Candidate("1-0", MemoryEvent(event_id="e", namespace="ns", content=text), text)

    async def main() -> tuple[Candidate, Candidate, tuple[bool, str], Any]:
        scored, summarized = cand(fact), cand(long)
        await ScoreStage(LLMScorer(client), min_score=0.6, importance_max_nudge=0.1).process(
            [scored]
        )
        await SummarizeStage(LLMSummarizer(client), token_budget=32).process([summarized])
        with charged_to("ns", "judge"):
            verdict = await judged(
                LLMConflictJudge(client), "standup is at 10 am", "standup is at 9 am"
            )
        with charged_to("ns", "poisoning"):
            (poison,) = await LLMPoisonJudge(client).judge([fact])
        return scored, summarized, verdict, poison

    scored, summarized, verdict, poison = asyncio.run(main())
    assert scored.notes["scored_by"] == "heuristic (budget)" and not scored.dropped
    assert summarized.notes["summarized_by"] == "extractive (budget)"
    assert verdict == (True, "heuristic (budget)")  # the heuristic still sees the change
    assert poison.budget and poison.source == "heuristic"
    assert [c.stage for c in ledger.skips] == ["score", "summary", "judge", "poisoning"]
