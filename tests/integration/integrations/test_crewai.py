"""The CrewAI storage backend with the real ``crewai`` package: its ``Memory``, and a
``Crew`` of two agents sharing the pool, on a scripted ``BaseLLM`` (CrewAI's interface
for custom LLMs, the way CrewAI's own tests stand in for a model).

crewai pins older pydantic and openai releases than the dev extras, so these tests
run in CI's second venv (``.ci/run``, with ``HINDSIGHT_TEST_CREWAI=1``: there a
missing crewai fails them); elsewhere they are skipped without it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

if os.environ.get("HINDSIGHT_TEST_CREWAI") != "1":
    pytest.importorskip("crewai", reason="runs in CI's second venv (.ci/run)")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.memory.analyze import (
    ConsolidationPlan,
    ExtractedMemories,
    MemoryAnalysis,
    QueryAnalysis,
)
from crewai.memory.storage.backend import StorageBackend
from crewai.memory.types import MemoryRecord
from pydantic import Field

from hindsight_redis import MemoryClient, Settings, Worker
from hindsight_redis.errors import InvalidArgument
from hindsight_redis.integrations.crewai import (
    HindsightStorage,
    hindsight_memory,
    text_vector,
    vector_text,
)
from tests.integration.helpers import Drain

# CrewAI's Agent reads its own deprecated fields while it is built (crewai 1.15).
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SEAT = "Alice prefers aisle seats on flights longer than three hours"
HOTEL = "Alice's Lisbon hotel is the Memmo Alfama, booked for 12 to 19 May"


class ScriptedLLM(BaseLLM):
    """A model that answers from a script: each agent turn the next ``answers`` item, and
    CrewAI's memory analyses (extraction, fields, queries, consolidation) by their
    response model. ``prompts`` keeps what each agent turn was given."""

    answers: list[str] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)
    scope: str = "/trips"

    def supports_function_calling(self) -> bool:
        return True  # so CrewAI asks for its analyses as response models

    def call(
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        if isinstance(messages, str):
            text = messages
        else:
            text = "\n".join(str(m.get("content", "")) for m in messages)
        if response_model is ExtractedMemories:  # the result of a task, as one memory
            answer = text.rsplit("Final Answer: ", 1)[-1].split("\n")[0]
            return ExtractedMemories(memories=[answer])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(suggested_scope=self.scope, categories=["travel"])
        if response_model is QueryAnalysis:
            return QueryAnalysis(recall_queries=["Alice Lisbon flight seat hotel"])
        if response_model is ConsolidationPlan:
            return ConsolidationPlan(actions=[], insert_new=True)
        self.prompts.append(text)
        answer = self.answers.pop(0) if self.answers else "Nothing to add."
        return f"Thought: I have what I need.\nFinal Answer: {answer}"


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def shared(settings: Settings) -> Iterator[MemoryClient]:
    with MemoryClient(settings.model_copy(update={"agent_id": "trip-crew"})) as opened:
        yield opened


def test_a_vector_carries_its_text_and_another_is_refused() -> None:
    text = "Où est l'hôtel d'Alice ? 12 May"
    assert vector_text(text_vector(text)) == text
    assert text_vector("a") != text_vector("b")
    with pytest.raises(InvalidArgument, match="searches by text"):
        vector_text([0.1] * 1536)


async def test_the_storage_keeps_scopes_and_changes_only_crewais_memories(
    shared: MemoryClient, drain: Drain
) -> None:
    storage = HindsightStorage(shared)
    assert isinstance(storage, StorageBackend)  # every method of CrewAI's protocol
    foreign = shared.write(SEAT, agent_id="concierge", source="langchain")
    storage.save(
        [
            MemoryRecord(content=HOTEL, scope="/crew/trips/hotels", categories=["travel"]),
            MemoryRecord(content="The Lisbon taxi costs 25 EUR", scope="/crew/trips/transport"),
            MemoryRecord(content="Bob's Berlin trip is in June", scope="/crew/other"),
        ]
    )
    await drain()
    hits = storage.search(text_vector("Alice Lisbon hotel aisle seat"), "/crew/trips", limit=10)
    found = {r.content: r for r, _ in hits}
    assert HOTEL in found and SEAT in found and "Bob's Berlin trip is in June" not in found
    assert found[HOTEL].scope == "/crew/trips/hotels" and found[HOTEL].categories == ["travel"]
    assert found[SEAT].scope == "/" and found[SEAT].metadata["agent_id"] == "concierge"
    assert [r.content for r, _ in hits if "travel" in r.categories] == [HOTEL]
    only = storage.search(text_vector("Lisbon"), "/crew/trips", categories=["travel"])
    assert [r.content for r, _ in only] == [HOTEL]
    assert storage.list_scopes("/crew") == ["/crew/other", "/crew/trips"]
    assert storage.list_scopes("/crew/trips") == ["/crew/trips/hotels", "/crew/trips/transport"]
    assert storage.count("/crew/trips") == 2 and storage.count() == 3
    assert storage.list_categories("/crew") == {"travel": 1}
    info = storage.get_scope_info("/crew/trips")
    assert info.record_count == 2 and info.child_scopes == [
        "/crew/trips/hotels",
        "/crew/trips/transport",
    ]
    hotel = found[HOTEL]
    got = storage.get_record(hotel.id)
    assert got is not None and (got.content, got.scope, got.categories) == (
        hotel.content,
        hotel.scope,
        hotel.categories,
    )
    assert [r.id for r, _ in await storage.asearch(text_vector("Memmo"), "/crew/trips")][:1] == [
        hotel.id
    ]
    storage.update(hotel)  # nothing changed: the same memory
    assert storage.get_record(hotel.id) is not None
    # A memory's text is fixed: an update writes the new one and erases CrewAI's old one.
    storage.update(hotel.model_copy(update={"content": HOTEL.replace("19", "20")}))
    assert storage.get_record(hotel.id) is None
    await drain()
    assert storage.count("/crew/trips/hotels") == 1
    # A crew's changes leave another adapter's memory alone.
    window = "Alice now wants window seats on night trains to Porto"
    storage.update(found[SEAT].model_copy(update={"content": window}))
    assert shared.get(foreign.id) is not None
    await drain()
    hotel = storage.list_records("/crew/trips/hotels")[0]
    assert hotel.content == HOTEL.replace("19", "20") and storage.count() == 4
    assert storage.delete(record_ids=[foreign.id, hotel.id]) == 1
    assert storage.get_record(hotel.id) is None and shared.get(foreign.id) is not None
    storage.reset("/crew/trips")
    assert storage.count("/crew/trips") == 0 and storage.count() == 2  # /crew/other, /
    storage.reset()
    assert storage.count() == 0
    assert [h.id for h in shared.search("aisle seats", mode="keyword")] == [foreign.id]


async def test_a_private_record_stays_with_the_crews_agent(
    shared: MemoryClient, settings: Settings, drain: Drain
) -> None:
    secret = "Alice's passport number ends in 4471 and expires in 2031"
    record = MemoryRecord(content=secret, scope="/crew/trips", private=True, source="alice")
    HindsightStorage(shared).save([record])
    with MemoryClient(settings) as anonymous:  # no agent_id: hindsight cannot keep it private
        HindsightStorage(anonymous).save([record.model_copy(update={"scope": "/crew/b"})])
    await drain()
    hits = HindsightStorage(shared).search(text_vector("Alice passport"), "/crew/trips")
    assert [(r.private, r.source) for r, _ in hits] == [(True, "alice")]
    found = shared.search("Alice passport", mode="keyword", as_agent="another-agent")
    assert [h.tags for h in found if "crewai:scope:/crew/b" in h.tags]  # the shared one
    assert not [h for h in found if "crewai:scope:/crew/trips" in h.tags]


async def test_a_crews_agents_share_one_pool_with_the_other_adapters(
    shared: MemoryClient, worker: Worker
) -> None:
    # acall: the worker consumes on this test's loop, which a blocking call would hold.
    await shared.acall(lambda c: c.write(SEAT, agent_id="concierge", source="langchain", wait=True))
    llm = ScriptedLLM(model="scripted", answers=[HOTEL, "Seat 14C, an aisle seat, at the Memmo"])
    # wait=True: a task's memories are searchable before the next task recalls.
    memory = hindsight_memory(shared, llm=llm, root_scope="/crew/trips", wait=True)
    booker = Agent(role="booker", goal="Book Alice's trip", backstory="A travel agent.", llm=llm)
    planner = Agent(role="planner", goal="Plan Alice's days", backstory="A planner.", llm=llm)
    tasks = [
        Task(
            description="Book a hotel in Lisbon for Alice.",
            expected_output="The booking.",
            agent=booker,
        ),
        Task(
            description="Which seat and hotel does Alice have in Lisbon?",
            expected_output="Her seat and hotel.",
            agent=planner,
            context=[],
        ),  # not the first task's output: what it left in memory
    ]
    try:  # in a thread: the worker consumes on this test's loop meanwhile
        await asyncio.to_thread(Crew(agents=[booker, planner], tasks=tasks, memory=memory).kickoff)
    finally:
        memory.close()
    first, second = llm.prompts
    assert SEAT in first  # another adapter's memory, in the first agent's prompt
    assert SEAT in second and HOTEL in second  # and what the first agent's task left
    hits = shared.search("Memmo Alfama hotel Lisbon", mode="keyword")
    crews = {h.content: h.tags for h in hits if h.source == "crewai"}
    assert "crewai:scope:/crew/trips/agent/booker/trips" in crews[HOTEL]  # CrewAI's scope
    memory.reset()  # the crew's memories go, the pool's stay
    assert [h.content for h in shared.search("Alice", mode="keyword", top_k=10)] == [SEAT]
