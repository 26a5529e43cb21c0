"""Dedup and conflict detection against stored memories and within a batch."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.index.manager import IndexInfo, MemoryIndex
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.stages.dedup import (
    DedupStage,
    HeuristicConflictJudge,
    LLMConflictJudge,
    judge_from_settings,
)
from hindsight_redis.pipeline.stages.embed import EmbedStage
from hindsight_redis.providers.embedders import HashEmbedder, LocalEmbedder
from hindsight_redis.settings import Settings
from tests.integration.helpers import hset_memory, wait_for

DATA = Path(__file__).resolve().parents[2] / "data" / "contradictions.jsonl"


def _cand(memory_id: str, content: str, **fields: Any) -> Candidate:
    event = MemoryEvent(
        event_id=memory_id, namespace="test", content=content, created_at=time.time(), **fields
    )
    return Candidate(f"0-{memory_id}", event, content)


class Stored:
    def __init__(self, redis: Redis, keys: Keys, info: IndexInfo, embedder: HashEmbedder) -> None:
        self.redis, self.keys, self.info, self.embedder = redis, keys, info, embedder
        self.count = 0

    async def put(self, memory_id: str, content: str, **fields: Any) -> None:
        cand = _cand(memory_id, content, **fields)
        await EmbedStage(self.embedder).process([cand])
        await hset_memory(self.redis, self.keys, self.info, self.embedder.model_id, cand)
        self.count += 1

        async def indexed() -> bool:
            return int((await self.redis.ft(self.info.alias).info())["num_docs"]) >= self.count

        await wait_for(indexed)


@pytest.fixture
async def stored(settings: Settings, redis: Redis) -> Stored:
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = HashEmbedder()
    info = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).ensure(embedder)
    return Stored(redis, keys, info, embedder)


async def _run(
    stored: Stored, settings: Settings, batch: list[Candidate], judge: Any = None
) -> None:
    await EmbedStage(stored.embedder).process(batch)
    stage = DedupStage(stored.redis, stored.keys, settings.dedup, stored.info, judge=judge)
    assert stage.name == "dedup"
    await stage.process(batch)


async def test_embed_stage_skips_dropped_candidates() -> None:
    keep, gone = _cand("a", "keep me"), _cand("b", "drop me")
    gone.drop("rule:test")
    await EmbedStage(HashEmbedder()).process([keep, gone])
    assert keep.embedding is not None and keep.embedding.shape == (256,)
    assert gone.embedding is None


async def test_near_duplicate_merges_into_stored_memory(stored: Stored, settings: Settings) -> None:
    await stored.put("old", "Alice prefers answers in Chinese")
    new = _cand("new", "Alice prefers answers in Chinese")
    await _run(stored, settings, [new])
    assert new.merge_into == "old" and not new.alive


async def test_distinct_memory_is_kept(stored: Stored, settings: Settings) -> None:
    await stored.put("old", "Alice prefers answers in Chinese")
    new = _cand("new", "The CI pipeline runs on two cores")
    await _run(stored, settings, [new])
    assert new.alive and new.merge_into is None and new.conflicts_with == []


async def test_duplicates_within_one_batch_merge_into_the_first(
    stored: Stored, settings: Settings
) -> None:
    first, second = (
        _cand("a", "Deploys happen on Tuesdays"),
        _cand("b", "Deploys happen on Tuesdays"),
    )
    await _run(stored, settings, [first, second])
    assert first.alive and second.merge_into == "a"


async def test_batch_mates_are_judged_against_earlier_ones_in_scope(
    stored: Stored, settings: Settings
) -> None:
    standup = "The weekly standup meeting starts at 9:00 in room B"
    batch = [
        _cand("theirs", standup, agent_id="b", visibility="private"),  # out of scope
        _cand("other", "Lunch is served at noon in the cafeteria"),
        _cand("first", standup),
        _cand("changed", "The weekly standup meeting starts at 10:30 in room B"),
        _cand("again", standup),
    ]
    await _run(stored, settings.model_copy(update={"conflict_threshold": 0.5}), batch)
    theirs, other, first, changed, again = batch
    assert theirs.alive and other.alive and first.alive  # nothing earlier in their scope
    assert first.merge_into is None and first.conflicts_with == []
    assert changed.conflicts_with == ["first"] and changed.merge_into is None
    assert again.merge_into == "first"  # the nearest earlier mate in scope, not "theirs"


async def test_archived_memories_are_not_merge_targets(stored: Stored, settings: Settings) -> None:
    await stored.put("old", "Alice prefers answers in Chinese")
    await stored.redis.hset(stored.keys.doc("old"), "status", "archived")
    new = _cand("new", "Alice prefers answers in Chinese")
    await _run(stored, settings, [new])
    assert new.alive


async def test_private_memory_never_merges_into_another_agents(
    stored: Stored, settings: Settings
) -> None:
    await stored.put(
        "theirs", "my api token lives in the vault", agent_id="b", visibility="private"
    )
    mine = _cand("mine", "my api token lives in the vault", agent_id="a", visibility="private")
    await _run(stored, settings, [mine])
    assert mine.alive


async def test_contradiction_is_flagged(stored: Stored, settings: Settings) -> None:
    await stored.put("old", "The weekly standup meeting starts at 9:00 in room B")
    new = _cand("new", "The weekly standup meeting starts at 10:30 in room B")
    await _run(stored, settings.model_copy(update={"conflict_threshold": 0.5}), [new])
    assert new.alive and new.conflicts_with == ["old"]


async def test_close_but_compatible_memory_is_not_flagged(
    stored: Stored, settings: Settings
) -> None:
    await stored.put("old", "The weekly standup meeting happens in room B")
    new = _cand("new", "The weekly standup meeting happens in room B with coffee")
    await _run(stored, settings.model_copy(update={"conflict_threshold": 0.5}), [new])
    assert new.conflicts_with == []


async def test_heuristic_judge() -> None:
    judge = HeuristicConflictJudge()
    assert await judge.contradicts("Alice does not like tea", "Alice likes tea")
    assert await judge.contradicts("用户不喜欢咖啡", "用户喜欢咖啡")
    assert await judge.contradicts("the limit is 20 requests", "the limit is 10 requests")
    assert not await judge.contradicts("Alice likes green tea", "Alice likes tea")


class FakeLLM:
    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.calls = 0

    async def complete_json(self, system: str, user: str, schema_hint: str) -> dict[str, Any]:
        self.calls += 1
        return self.answer


async def test_llm_judge_verdict_and_fallback() -> None:
    vegetarian, steak = "Alice is vegetarian", "Alice is vegetarian but eats steak on Sundays"
    assert await LLMConflictJudge(FakeLLM({"contradicts": True})).contradicts(steak, vegetarian)
    assert not await LLMConflictJudge(FakeLLM({"contradicts": False})).contradicts(
        "the limit is 1 per user", "the limit is 2 per user"
    )
    # A malformed answer falls back to the heuristic (numbers differ here).
    assert await LLMConflictJudge(FakeLLM({"verdict": "yes"})).contradicts(
        "the limit is 1 per user", "the limit is 2 per user"
    )
    # Texts about different things are not sent to the model at all.
    llm = FakeLLM({"contradicts": True})
    assert not await LLMConflictJudge(llm).contradicts(
        "The VPN needs two-factor login", "Bob flies to Denver on Friday"
    )
    assert llm.calls == 0


async def test_llm_judge_through_litellm_mock(settings: Settings) -> None:
    from hindsight_redis.providers.llm import LLMClient

    llm_settings = settings.model_copy(update={"llm_model": "openai/gpt-4o-mini"})
    llm = LLMClient(
        llm_settings.llm, mock_response='{"contradicts": true, "reason": "time changed"}'
    )
    assert await LLMConflictJudge(llm).contradicts("standup at 10", "standup at 9")
    assert isinstance(judge_from_settings(settings.llm), HeuristicConflictJudge)


# The labelled pairs (tests/data/contradictions.jsonl) through the real stage:
# the default embedder, the default thresholds, one namespace per pair.
PAIRS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


async def _verdict(
    redis: Redis, settings: Settings, local: LocalEmbedder, n: int, pair: dict[str, str]
) -> Candidate:
    scoped = settings.model_copy(update={"namespace": f"pair{n}", "embedder": "local"})
    keys = Keys(scoped.key_prefix, scoped.namespace)
    info = await MemoryIndex(redis, keys, scoped.index, scoped.search, scoped.embedding).ensure(
        local
    )
    store = Stored(redis, keys, info, local)  # type: ignore[arg-type]
    await store.put("old", pair["old"])
    new = _cand("new", pair["new"])
    await EmbedStage(local).process([new])
    await DedupStage(
        redis, keys, scoped.dedup, info, judge=judge_from_settings(scoped.llm)
    ).process([new])
    return new


async def test_changed_facts_are_flagged_never_merged(
    redis: Redis, settings: Settings, local: LocalEmbedder
) -> None:
    contradictions = [p for p in PAIRS if p["label"] == "contradiction"]
    flagged = 0
    for n, pair in enumerate(contradictions):
        new = await _verdict(redis, settings, local, n, pair)
        assert new.merge_into is None, pair  # the new fact is never lost in a merge
        flagged += new.conflicts_with == ["old"]
    assert flagged / len(contradictions) >= 0.9, flagged


async def test_restatements_are_not_flagged(
    redis: Redis, settings: Settings, local: LocalEmbedder
) -> None:
    restatements = [p for p in PAIRS if p["label"] == "restatement"]
    wrongly = 0
    for n, pair in enumerate(restatements):
        new = await _verdict(redis, settings, local, 100 + n, pair)
        wrongly += bool(new.conflicts_with)
    assert wrongly / len(restatements) <= 0.1, wrongly


async def test_a_restated_duplicate_still_merges(
    redis: Redis, settings: Settings, local: LocalEmbedder
) -> None:
    pair = {
        "old": "The weekly standup meeting happens in room B",
        "new": "The weekly standup meeting happens in room B.",
    }
    new = await _verdict(redis, settings, local, 999, pair)
    assert new.merge_into == "old" and not new.conflicts_with


async def test_exact_twins_in_flight_at_once_become_one_memory(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    # Two workers each holding one copy, neither seeing the other's (no rule cache,
    # no dedup stage: only the commit can tell): the second commit merges.
    from hindsight_redis import Worker
    from hindsight_redis.pipeline.stages.embed import EmbedStage
    from hindsight_redis.providers.embedders import embedder_from_settings

    text = "Carol moved the weekly standup to Thursday at 10:30 in room B"
    first = await client.write(text, session_id="s1")
    second = await client.write("  carol moved the weekly standup to thursday at 10:30 in room b")
    stages = [EmbedStage(embedder_from_settings(settings.embedding))]
    await Worker(settings, stages=stages).run_async(burst=True)
    kept, twin = await client.get(first.id), await client.get(second.id)
    assert kept is not None and kept.status == "active"
    assert twin is not None and twin.status == "merged"
    hits = await client.search("weekly standup Thursday", top_k=5)
    assert [h.id for h in hits] == [first.id]
    stats = await client.stats()
    assert (stats["indexed"], stats["merged"]) == (1, 1)
    # An archived holder does not swallow a new copy: the text is stored again.
    await client.forget(first.id)
    again = await client.write(text)
    await Worker(settings, stages=stages).run_async(burst=True)
    record = await client.get(again.id)
    assert record is not None and record.status == "active"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Step 3 of the restore runbook: restart 3 pods",
            "Step 13 of the restore runbook: restart 3 pods",
        ),
        ("Checklist item 1: rotate the staging keys", "Checklist item 11: rotate the staging keys"),
        (
            "Alice prefers her invoices in EUR over USD",
            "Alice prefers her invoices in USD over EUR",
        ),
    ],
)
async def test_items_of_one_template_and_reversed_preferences_are_never_merged(
    redis: Redis, settings: Settings, local: LocalEmbedder, old: str, new: str
) -> None:
    """A number only one text states, or two words that traded places, is a different
    fact: the new write is kept (merging would keep one text of the two)."""
    verdict = await _verdict(redis, settings, local, 300 + len(old), {"old": old, "new": new})
    assert verdict.merge_into is None
