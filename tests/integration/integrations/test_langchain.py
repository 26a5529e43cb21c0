"""The LangChain retriever and tools with the real ``langchain-core`` package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.tools import BaseTool

from hindsight_redis import AsyncMemoryClient, InvalidArgument, MemoryClient, Settings, Worker
from hindsight_redis.integrations.langchain import HindsightRetriever, memory_tools
from hindsight_redis.service.tools import TOOLS
from tests.integration.helpers import Drain

FACT = "The billing-service-v2 deploy failed with ERR_CONN_RESET; bob rolled it back at 14:05"


@pytest.fixture
def shared(settings: Settings) -> Iterator[MemoryClient]:
    with MemoryClient(settings.model_copy(update={"agent_id": "helper"})) as opened:
        yield opened


async def test_the_retriever_returns_documents_with_scores_and_ids(
    settings: Settings, client: AsyncMemoryClient, drain: Drain
) -> None:
    receipt = await client.write(FACT, agent_id="ops", tags=["billing"])
    await drain()
    retriever = HindsightRetriever(settings=settings, top_k=3, filters={"tags": ["billing"]})
    try:
        docs = await retriever.ainvoke("what broke the billing deploy? ERR_CONN_RESET")
        assert [d.id for d in docs] == [receipt.id] and isinstance(docs[0], Document)
        meta = docs[0].metadata
        assert docs[0].page_content == FACT and meta["id"] == receipt.id
        assert meta["agent_id"] == "ops" and meta["tags"] == ["billing"] and meta["fused"] > 0
        assert meta["keyword"] is not None and meta["conflicts_with"] == []
        assert [d.id for d in retriever.invoke("ERR_CONN_RESET")] == [receipt.id]  # blocking too
        keyword = HindsightRetriever(settings=settings, mode="keyword")
        assert keyword.invoke("nothing-like-this-anywhere") == []
        keyword.close()
    finally:
        retriever.close()


def test_the_tools_are_the_mcp_tools_specs(shared: MemoryClient) -> None:
    tools = memory_tools(client=shared)
    offered = [s for s in TOOLS if s.scope != "admin"]  # never the review of held writes
    assert [t.name for t in tools] == [s.name for s in offered]
    assert {"memory_review", "memory_approve", "memory_reject"} <= {s.name for s in TOOLS}
    for tool, spec in zip(tools, offered, strict=True):
        assert isinstance(tool, BaseTool) and tool.description == spec.description
        assert tool.args_schema is spec.arguments  # the very schema the MCP server serves
    assert [t.name for t in memory_tools(client=shared, names=["memory_search"])] == [
        "memory_search"
    ]
    with pytest.raises(ValueError, match="unknown tool"):
        memory_tools(client=shared, names=["memory_drop_table"])
    with pytest.raises(ValueError, match="unknown tool"):
        memory_tools(client=shared, names=["memory_approve"])


async def test_tools_write_search_and_report_errors_to_the_model(
    shared: MemoryClient, worker: Worker
) -> None:
    tools = {t.name: t for t in memory_tools(client=shared)}
    written = await tools["memory_write"].ainvoke(
        {"content": FACT, "agent_id": "forged", "wait": True, "timeout_s": 20}
    )
    assert written["status"] == "indexed"
    record = shared.get(written["id"])
    assert record is not None and record.agent_id == "helper"  # the model cannot name a writer
    hits = tools["memory_search"].invoke({"query": "ERR_CONN_RESET", "mode": "keyword"})
    assert [h["id"] for h in hits] == [written["id"]]
    error = tools["memory_get"].invoke({"memory_id": "bad id with spaces"})
    assert isinstance(error, str) and "InvalidMemory (not retryable)" in error
    assert tools["memory_conflicts"].invoke({}) == []


async def test_a_models_tools_never_erase(shared: MemoryClient, worker: Worker) -> None:
    tools = {t.name: t for t in memory_tools(client=shared)}
    written = await tools["memory_write"].ainvoke({"content": FACT, "wait": True, "timeout_s": 20})
    assert not {"memory_erase", "memory_approve", "memory_reject"} & set(tools)  # not offered
    with pytest.raises(InvalidArgument, match="admin tools never offered to a model: memory_erase"):
        memory_tools(client=shared, names=["memory_erase", "memory_search"])
    assert shared.get(written["id"]) is not None
