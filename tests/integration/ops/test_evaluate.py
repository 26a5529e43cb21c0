"""``client.evaluate`` on the embedded Redis: golden questions through the public search,
the self-check of the pool (rare words, and the LLM through litellm's real code path), and
agreement with the LoCoMo recall benchmark on the same pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import locomo
from benchmarks.locomo_golden import write_golden
from benchmarks.recall import write_items
from hindsight_redis import AsyncMemoryClient, MemoryClient, Settings
from hindsight_redis.ops.selfcheck import run_self
from hindsight_redis.providers.llm import LLMClient
from tests.integration.helpers import Drain

MEMORIES = [
    ("The billing-service deploy window is Tuesday 14:00 to 16:00 UTC", "turn-1", "ops"),
    ("Alice prefers answers in French and weekly summaries on Friday", "turn-2", "alice"),
    ("The staging Postgres cluster moved to eu-west-1 on March 14", "turn-3", "ops"),
    ("Bob's cat Miso needs insulin twice a day at 8am and 8pm", "turn-4", "bob"),
    ("The quarterly OKR review happens in the Lisbon office in October", "turn-5", "ops"),
    ("Carol rotates the Vault credentials every 30 days on the first Monday", "turn-6", "ops"),
]


async def _written(client: AsyncMemoryClient, drain: Drain) -> dict[str, str]:
    """The memories written and indexed: source -> id."""
    receipts = await client.write_many(
        [{"content": c, "source": s, "session_id": sess} for c, s, sess in MEMORIES]
    )
    report = await drain()
    assert report.indexed == len(MEMORIES)
    return {source: r.id for (_, source, _), r in zip(MEMORIES, receipts, strict=True)}


async def test_golden_questions_by_id_and_by_source(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    ids = await _written(client, drain)
    questions = [
        {"query": "billing deploy window Tuesday", "relevant": [ids["turn-1"]], "tags": ["ops"]},
        {"query": "Postgres staging cluster region", "relevant_sources": ["turn-3"]},
        {
            "query": "insulin for the cat",
            "relevant_sources": ["turn-4"],
            "filters": {"session_id": "bob"},
            "tags": ["pets", "ops"],
        },
        # Filtered to a session that does not hold it: nothing relevant can be found.
        {
            "query": "Vault credentials rotation",
            "relevant_sources": ["turn-6"],
            "filters": {"session_id": "alice"},
            "tags": ["pets"],
        },
    ]
    report = await client.evaluate(questions, k=3, mode="keyword")
    assert report.kind == "golden" and report.k == 3 and report.mode == "keyword"
    assert report.overall.questions == 4
    assert report.overall.recall == pytest.approx(0.75) and report.overall.hit == 0.75
    assert report.overall.mrr == pytest.approx(0.75)  # each found one first
    assert [m.line for m in report.missed] == [4] and report.missed[0].relevant == ("turn-6",)
    assert report.by_tag["ops"].questions == 2 and report.by_tag["ops"].recall == 1.0
    assert report.by_tag["pets"].questions == 2 and report.by_tag["pets"].recall == 0.5
    assert report.p99_ms >= report.p50_ms > 0


async def test_the_sync_client_reads_a_golden_file(
    settings: Settings, client: AsyncMemoryClient, drain: Drain, tmp_path: Path
) -> None:
    await _written(client, drain)
    path = tmp_path / "golden.jsonl"
    lines = [
        {"query": "Lisbon OKR review", "relevant_sources": ["turn-5"]},
        {"query": "French weekly summaries", "relevant_sources": ["turn-2", "turn-9"]},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with MemoryClient(settings) as sync:
        report = sync.evaluate(path, k=5)
    assert report.overall.questions == 2
    assert report.overall.recall == pytest.approx(0.75)  # turn-9 does not exist
    assert report.overall.hit == 1.0 and report.missed == []


async def test_the_self_check_finds_each_sampled_memory_by_its_rare_words(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    ids = await _written(client, drain)
    report = await client.evaluate(sample=len(MEMORIES), k=3, seed=7)
    assert report.kind == "self" and report.overall.questions == len(MEMORIES)
    assert report.overall.hit == 1.0 and report.overall.mrr == 1.0, report.missed
    again = await client.evaluate(sample=2, k=3, seed=7)
    assert again.overall.questions == 2
    await client.forget(ids["turn-1"])  # archived: not sampled
    for seed in range(5):
        sampled = await client.evaluate(sample=len(MEMORIES), k=3, seed=seed)
        assert sampled.overall.questions == len(MEMORIES) - 1


async def test_the_self_check_asks_the_llm_when_one_is_configured(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    """litellm's real code path, its answer mocked: every query is the model's question."""
    await _written(client, drain)
    llm_settings = client.settings.model_copy(update={"llm_model": "openai/gpt-4o-mini"})
    asked = "When is the billing-service deploy window?"
    llm = LLMClient(llm_settings.llm, mock_response=asked)
    report = await run_self(
        client.redis, client.keys, client.search, 3, viewer="", k=1, llm=llm, seed=3
    )
    assert report.overall.questions == 3
    assert "queries written by openai/gpt-4o-mini" in report.notes
    assert report.missed and {m.query for m in report.missed} == {asked}


async def test_the_self_check_of_an_empty_pool_says_so(client: AsyncMemoryClient) -> None:
    await client.write("Only written, never indexed: no worker ran")
    report = await client.evaluate(sample=3)
    assert report.overall.questions == 0 and report.missed == []
    assert "none is indexed yet" in report.notes[-1]


@pytest.mark.skipif(not locomo.path().exists(), reason="the LoCoMo dev file is not here")
async def test_eval_agrees_with_the_locomo_recall_benchmark(
    settings: Settings, drain: Drain, tmp_path: Path
) -> None:
    """One conversation written as ``benchmarks/recall.py`` writes it; ``evaluate`` on the
    golden file of ``benchmarks.locomo_golden`` reports the recall computed as the
    benchmark computes it, on the same pool."""
    fast = settings.model_copy(update={"contextual_embedder": "none", "max_backlog": 100_000})
    data = locomo.load()[1:2]  # conv-30: the shortest
    turns, questions = locomo.turns(data), locomo.questions(data)
    k = 5
    async with AsyncMemoryClient(fast) as client:
        items = write_items(turns)
        for start in range(0, len(items), 500):
            await client.write_many(items[start : start + 500], context_from_previous=2)
        await drain(fast)
        benchmark = []
        for q in questions:
            hits = await client.search(q.text, top_k=k, mode="hybrid", session_id=q.conversation)
            benchmark.append(len(q.evidence & {h.source for h in hits}) / len(q.evidence))
        golden = tmp_path / "locomo.jsonl"
        assert write_golden(golden, 2) > len(questions)  # conversations 0 and 1
        lines = golden.read_text(encoding="utf-8").splitlines()
        mine = tmp_path / "conv.jsonl"
        mine.write_text(
            "".join(x + "\n" for x in lines if json.loads(x)["filters"]["session_id"] == "conv-30"),
            encoding="utf-8",
        )
        report = await client.evaluate(mine, k=k, mode="hybrid")
    assert report.overall.questions == len(questions)
    assert report.overall.recall == pytest.approx(sum(benchmark) / len(benchmark), abs=0.005)
    assert set(report.by_tag) >= {"dev", "single-hop"}
