"""The LlamaIndex memory block and retriever with the real ``llama-index-core`` package:
its ``Memory``, chat and query engines, and its ``MockLLM`` (which answers with the
prompt it was given, so a test reads what the model saw)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory
from llama_index.core.query_engine import RetrieverQueryEngine
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from hindsight_redis import MemoryClient, Settings
from hindsight_redis.integrations.llamaindex import HindsightMemoryBlock, HindsightRetriever
from tests.integration.helpers import Drain

FACT = "The staging database moved to db-staging-7 on port 6380 in March"


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    """The chat store's SQLite, closed after the test (``Memory`` never closes its own)."""
    created = create_async_engine("sqlite+aiosqlite:///:memory:")
    yield created
    await created.dispose()


@pytest.fixture
def shared(settings: Settings) -> Iterator[MemoryClient]:
    with MemoryClient(settings.model_copy(update={"agent_id": "docs-agent"})) as opened:
        yield opened


async def test_memory_puts_the_pools_facts_into_the_chat_history(
    shared: MemoryClient, drain: Drain, engine: AsyncEngine
) -> None:
    written = shared.write(FACT, agent_id="ops", task_type="preference")
    await drain()
    block = HindsightMemoryBlock(client=shared, top_k=3, write=False)
    memory = Memory.from_defaults(session_id="chat-9", memory_blocks=[block], async_engine=engine)
    await memory.aput(ChatMessage(role="user", content="Which port does db-staging-7 use?"))
    history = await memory.aget()
    assert FACT in history[0].content and history[-1].role == "user"  # the block, then the chat
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)
    answer = await engine.achat("and where is the staging database now?")
    assert FACT in str(answer)  # what the model was given
    assert shared.get(written.id) is not None


async def test_flushed_messages_become_memories_of_the_session(
    shared: MemoryClient, drain: Drain, engine: AsyncEngine
) -> None:
    block = HindsightMemoryBlock(client=shared, mode="keyword")
    memory = Memory.from_defaults(
        session_id="chat-10",
        memory_blocks=[block],
        token_limit=60,
        token_flush_size=20,
        async_engine=engine,
    )
    said = "Deploys of the billing service need a sign-off from the payments team lead"
    await memory.aput_messages(
        [
            ChatMessage(role="user", content=said),
            ChatMessage(role="assistant", content="Understood, I will ask them first."),
            *[ChatMessage(role="user", content=f"padding message number {n}") for n in range(8)],
        ]
    )
    await memory.aget()  # flushes the oldest messages to the blocks
    await drain()
    hits = shared.search("billing sign-off payments", session_id="chat-10", mode="keyword")
    assert [h.content for h in hits][:1] == [said]
    assert hits[0].source == "llamaindex" and hits[0].agent_id == "docs-agent"


async def test_the_retriever_returns_nodes_with_scores_to_a_query_engine(
    shared: MemoryClient, drain: Drain
) -> None:
    written = shared.write(FACT, agent_id="ops", tags=["infra"])
    await drain()
    retriever = HindsightRetriever(shared, top_k=3, filters={"tags": ["infra"]})
    nodes = await retriever.aretrieve("where did the staging database move? db-staging-7")
    assert [n.node.node_id for n in nodes] == [written.id]
    assert nodes[0].node.get_content() == FACT and (nodes[0].score or 0) > 0
    assert nodes[0].node.metadata["agent_id"] == "ops" and nodes[0].node.metadata["tags"] == [
        "infra"
    ]
    assert [n.node.node_id for n in retriever.retrieve("db-staging-7")] == [written.id]
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = await engine.aquery("Where is the staging database?")
    assert FACT in str(response) and [n.node.node_id for n in response.source_nodes] == [written.id]
    assert "agent_id" not in str(response)  # the scores and fields stay out of the prompt
