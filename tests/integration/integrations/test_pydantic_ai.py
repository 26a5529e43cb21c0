"""The PydanticAI tools with the real ``pydantic-ai-slim`` package and its own test models
(``TestModel``, ``FunctionModel``): no network."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from hindsight_redis import InvalidArgument, MemoryClient, Settings, Worker
from hindsight_redis.integrations.pydantic_ai import HindsightDeps, memory_tools
from hindsight_redis.service.tools import TOOLS

FACT = "The staging database moved to db-staging-7 on port 6380 in March"


@pytest.fixture
def deps(settings: Settings) -> Iterator[HindsightDeps]:
    with MemoryClient(settings.model_copy(update={"agent_id": "ops-agent"})) as opened:
        yield HindsightDeps(opened)


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart | RetryPromptPart]:
    """The tool results (and retry prompts) the model was last sent."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return [p for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]


def test_the_tools_are_the_mcp_tools_specs() -> None:
    tools = memory_tools()
    offered = [s for s in TOOLS if s.scope != "admin"]
    assert [t.name for t in tools] == [s.name for s in offered]
    for tool, spec in zip(tools, offered, strict=True):
        assert tool.description == spec.description
        assert tool.function_schema.json_schema == spec.arguments.model_json_schema()
    with pytest.raises(InvalidArgument, match="admin tools never offered to a model: memory_erase"):
        memory_tools(["memory_erase"])


async def test_a_run_writes_then_finds_through_the_tools(
    deps: HindsightDeps, worker: Worker
) -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls = sum(isinstance(m, ModelResponse) for m in messages)
        if calls == 0:
            args = {"content": FACT, "agent_id": "forged", "wait": True, "timeout_s": 20}
            return ModelResponse(parts=[ToolCallPart("memory_write", args)])
        if calls == 1:
            return ModelResponse(parts=[ToolCallPart("memory_search", {"query": "db-staging-7"})])
        (found,) = returns(messages)
        return ModelResponse(parts=[TextPart("\n".join(h["content"] for h in found.content))])

    agent = Agent(FunctionModel(model), deps_type=HindsightDeps, tools=memory_tools())
    result = await agent.run("Where is the staging database now?", deps=deps)
    assert result.output == FACT
    written = [p for m in result.all_messages() for p in getattr(m, "parts", ())]
    receipt = next(
        p.content
        for p in written
        if getattr(p, "tool_name", "") == "memory_write" and isinstance(p, ToolReturnPart)
    )
    assert receipt["status"] == "indexed"
    record = deps.client.get(receipt["id"])
    assert record is not None and record.agent_id == "ops-agent"  # the model cannot name a writer


async def test_bad_arguments_ask_for_a_retry_and_failures_are_final(deps: HindsightDeps) -> None:
    seen: list[list[ToolReturnPart | RetryPromptPart]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls = sum(isinstance(m, ModelResponse) for m in messages)
        if calls:
            seen.append(returns(messages))
        if calls == 0:
            return ModelResponse(parts=[ToolCallPart("memory_get", {})])  # no memory_id
        if calls == 1:
            return ModelResponse(parts=[ToolCallPart("memory_get", {"memory_id": "bad id"})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), deps_type=HindsightDeps, tools=memory_tools(["memory_get"]))
    assert (await agent.run("look it up", deps=deps)).output == "done"
    (retry,), (failed,) = seen
    assert isinstance(retry, ToolReturnPart | RetryPromptPart)
    assert "InvalidArgument (retryable" in str(retry.content)
    assert isinstance(failed, ToolReturnPart) and failed.outcome == "failed"
    assert "InvalidMemory (not retryable)" in str(failed.content)
    if isinstance(retry, ToolReturnPart):  # this version reports a retry as a return part
        assert retry.outcome == "retried"


async def test_the_test_model_calls_every_tool(deps: HindsightDeps, worker: Worker) -> None:
    agent = Agent(TestModel(), deps_type=HindsightDeps, tools=memory_tools())
    result = await agent.run("use your memory", deps=deps)
    called = {
        p.tool_name
        for m in result.all_messages()
        for p in getattr(m, "parts", ())
        if isinstance(p, ToolReturnPart)
    }
    assert {"memory_write", "memory_search", "memory_stats"} <= called
