"""LLM spend: every call counted per namespace and stage, the daily budget enforced.

A real worker, real Redis, and litellm's real ``acompletion``: only the provider is
replaced, by litellm's own ``mock_response`` (which fills in the usage: 10 prompt and
20 completion tokens a call), chosen per stage from the system prompt. The mock records
which model each stage called.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis
from starlette.testclient import TestClient

from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.core.keys import Keys
from hindsight_redis.ops.metrics import MetricsApp
from hindsight_redis.providers.litellm_import import load_litellm
from hindsight_redis.providers.spend import day_of
from hindsight_redis.service.console import build_app
from hindsight_redis.settings import Settings

FACTS = [
    "I moved to Lisbon in March 2024 and work at the Alfama office",
    "We decided to ship the billing service v2.3 on Friday, March 14",
]
CALL_TOKENS = 30  # litellm's mock usage: 10 prompt + 20 completion tokens


class Calls:
    """The models each stage called, through the real ``litellm.acompletion``."""

    def __init__(self) -> None:
        self.models: dict[str, list[str]] = {}

    def stage_of(self, system: str) -> str:
        if "You rate candidate entries" in system:
            return "score"
        if "You summarize entries" in system:
            return "summary"
        if "You compare two notes" in system:
            return "judge"
        return "poisoning"

    @staticmethod
    def answer(stage: str) -> str:
        return {
            "score": json.dumps({"score": 0.9, "reason": "durable fact"}),
            "summary": "A short summary.",
            "judge": json.dumps({"contradicts": False, "reason": "adds detail"}),
            "poisoning": json.dumps({"poisoning": 0.0, "kind": "none", "reason": "plain fact"}),
        }[stage]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calls]:
    litellm = load_litellm()
    real = litellm.acompletion
    seen = Calls()

    async def acompletion(**kwargs: Any) -> Any:
        stage = seen.stage_of(kwargs["messages"][0]["content"])
        seen.models.setdefault(stage, []).append(kwargs["model"])
        return await real(**kwargs, mock_response=seen.answer(stage))

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    yield seen


def _on(settings: Settings, namespace: str, **update: Any) -> Settings:
    return settings.model_copy(
        update={
            "namespace": namespace,
            "llm_model": "gpt-4o-mini",
            "llm_api_key": SecretStr("sk-test"),
            "llm_retry_backoff_s": 0.0,
            **update,
        }
    )


async def _write(settings: Settings, texts: list[str]) -> list[str]:
    async with AsyncMemoryClient(settings) as client:
        return [(await client.write(t)).id for t in texts]


async def test_spend_is_counted_per_namespace_and_stage_with_each_stage_s_model(
    settings: Settings, calls: Calls, redis: Redis
) -> None:
    on = _on(settings, "a", score_model="gpt-3.5-turbo", judge_model="openai/house-judge")
    await _write(on, FACTS)
    await _write(_on(on, "b"), FACTS[:1])
    report = await Worker(on, namespaces=["a", "b"]).run_async(burst=True)
    assert report.indexed == 3
    # Each stage called its own model: the cheap scorer, the house judge for poisoning.
    assert calls.models["score"] == ["gpt-3.5-turbo"] * 3
    assert calls.models["poisoning"] == ["openai/house-judge"] * 3
    async with AsyncMemoryClient(on) as a:
        spend = (await a.stats())["llm_spend"]
    stages = spend["stages"]
    assert stages["score"]["calls"] == 2 and stages["score"]["tokens"] == 2 * CALL_TOKENS
    assert stages["poisoning"]["calls"] == 2
    assert spend["calls"] == sum(s["calls"] for s in stages.values())
    assert spend["tokens"] == CALL_TOKENS * spend["calls"]
    # Dollars where litellm's cost map prices the model (gpt-3.5-turbo), none for the house
    # judge (counted as unpriced).
    assert stages["score"]["usd"] > 0 and stages["poisoning"]["usd"] == 0
    assert spend["usd"] == pytest.approx(sum(s["usd"] for s in stages.values()))
    assert spend["unpriced_calls"] == stages["poisoning"]["calls"] + stages.get("judge", {}).get(
        "calls", 0
    )
    assert spend["budget"] == {"tokens": 0, "usd": 0.0} and not spend["budget_reached"]
    assert spend["total"]["tokens"] == spend["tokens"]
    # The other namespace paid for its own write only.
    async with AsyncMemoryClient(_on(on, "b")) as b:
        other = (await b.stats())["llm_spend"]
    assert other["stages"]["score"]["calls"] == 1
    # The day's hash expires; the all-time one (the metrics' counters) stays.
    keys = Keys(on.key_prefix, "a")
    assert await redis.ttl(keys.llm_spend(day_of(time.time()))) > 0
    assert await redis.ttl(keys.llm_spend_total) == -1
    # The metrics show the same.
    app = MetricsApp(on, cache_s=0.0)
    try:
        body = (await app.render())[0].decode()
    finally:
        await app.aclose()
    assert f'hindsight_llm_tokens_total{{namespace="a",stage="score"}} {2 * CALL_TOKENS}.0' in body
    assert 'hindsight_llm_calls_total{namespace="b",stage="score"} 1.0' in body
    assert f'hindsight_llm_tokens_today{{namespace="a"}} {float(spend["tokens"])}' in body
    assert "hindsight_llm_budget_tokens 0.0" in body


async def test_past_the_budget_the_heuristics_stand_in_and_nothing_is_dropped_for_it(
    settings: Settings, calls: Calls
) -> None:
    # Two calls a day: the first write's poisoning check and score spend it.
    on = _on(settings, "tight", llm_daily_tokens=2 * CALL_TOKENS)
    await _write(on, FACTS[:1])
    await Worker(on).run_async(burst=True)
    spent = len(calls.models["score"])
    assert spent == 1 and len(calls.models["poisoning"]) == 1
    worker = Worker(on, name="late")
    task = asyncio.create_task(worker.run_async())
    try:
        async with AsyncMemoryClient(on) as client:
            receipt = await client.write(FACTS[1], wait=True, timeout_s=30)
            noise = await client.write("Wow, that's cool! How are you?", wait=True, timeout_s=30)
            stats = await client.stats()
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
    # The fact is kept, scored by the heuristic, and the receipt says why.
    assert receipt.status == "indexed"
    assert receipt.scored_by == "heuristic (budget)"
    # Chatter is still dropped for its score, not for the budget.
    assert noise.status == "dropped" and noise.reason == "score:low"
    assert len(calls.models["score"]) == spent  # no call past the budget
    spend = stats["llm_spend"]
    assert spend["budget_reached"]
    assert spend["stages"]["score"]["skipped"] == 2
    assert spend["stages"]["poisoning"]["skipped"] == 2
    assert spend["tokens"] == 2 * CALL_TOKENS  # nothing spent past the budget
    assert stats["indexed"] == 2
    # The console's namespace page says so too.
    with TestClient(build_app(on), base_url="http://127.0.0.1:8766") as http:
        page = http.get("/ns/tight").text
    assert "LLM today" in page
    assert "60 tokens of 60, $0.000027, 2 calls; budget reached" in page


async def test_dollar_budget(settings: Settings, calls: Calls) -> None:
    on = _on(settings, "usd", llm_daily_usd=1e-9)  # one priced call spends it
    await _write(on, FACTS[:1])
    await Worker(on).run_async(burst=True)
    await _write(on, ["The VPN needs two-factor login since May 2"])
    await Worker(on).run_async(burst=True)
    async with AsyncMemoryClient(on) as client:
        spend = (await client.stats())["llm_spend"]
    assert spend["budget_reached"] and spend["usd"] > 0
    # The first write's poisoning check spent it; every call after it was saved.
    poisoning = spend["stages"]["poisoning"]
    assert poisoning == {"calls": 1, "skipped": 1, "tokens": CALL_TOKENS, "usd": spend["usd"]}
    assert spend["stages"]["score"] == {"skipped": 2}
    assert "score" not in calls.models
