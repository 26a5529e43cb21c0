"""The OpenAI Agents SDK session and tools with the real ``openai-agents`` package.

The model is a ``Model`` of the SDK's interface that plays a script (the SDK
runs any ``Model``): no network, everything else is the SDK's own ``Runner``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner, SessionSettings
from agents.items import ModelResponse, TResponseInputItem, TResponseOutputItem
from agents.memory import Session
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from hindsight_redis import MemoryClient, Settings, Worker
from hindsight_redis.integrations.openai_agents import HindsightSession, memory_tools
from hindsight_redis.service.tools import TOOLS
from tests.integration.helpers import Drain, wait_for

FACT = "Alice prefers aisle seats on flights longer than three hours"
Turn = Callable[[list[TResponseInputItem]], list[TResponseOutputItem]]


def say(text: str) -> list[TResponseOutputItem]:
    """A model turn that answers with ``text``."""
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    message = ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed", content=[part]
    )
    return [message]


def call(name: str, **arguments: Any) -> list[TResponseOutputItem]:
    """A model turn that calls the tool ``name``."""
    return [
        ResponseFunctionToolCall(
            type="function_call", call_id=f"call-{name}", name=name, arguments=json.dumps(arguments)
        )
    ]


class Scripted(Model):
    """A model that plays its turns in order and keeps each input it was given."""

    def __init__(self, *turns: Turn) -> None:
        self.turns = list(turns)
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        given = args[1] if len(args) > 1 else kwargs["input"]
        items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
        self.inputs.append(items)
        return ModelResponse(output=self.turns.pop(0)(items), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run without streaming")


def texts(items: list[TResponseInputItem]) -> str:
    """Every text of the items (messages and tool outputs), for assertions."""
    return json.dumps(items)


@pytest.fixture
def shared(settings: Settings) -> Iterator[MemoryClient]:
    with MemoryClient(settings.model_copy(update={"agent_id": "travel-agent"})) as opened:
        yield opened


async def test_the_session_keeps_items_in_order_across_clients(settings: Settings) -> None:
    first = HindsightSession("chat-1", settings)
    try:
        assert isinstance(first, Session)  # the SDK's protocol
        assert await first.get_items() == [] and await first.pop_item() is None
        items: list[TResponseInputItem] = [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi, how can I help?"},
            {"role": "user", "content": "book a flight"},
        ]
        await first.add_items(items)
        await first.add_items([])
    finally:
        first.close()
    again = HindsightSession("chat-1", settings, session_settings=SessionSettings(limit=2))
    other = HindsightSession("chat-2", settings)
    try:
        assert await again.get_items(limit=None) == items[1:]  # the settings' limit
        assert await again.get_items(limit=5) == items and await again.get_items(0) == []
        assert await other.get_items() == []
        assert await again.pop_item() == items[2]
        assert await again.get_items(limit=10) == items[:2]
        await again.clear_session()
        assert await again.get_items(limit=10) == []
    finally:
        again.close()
        other.close()
    with pytest.raises(ValueError, match="a session needs an id"):
        HindsightSession("", settings)


READER = """
import asyncio, json
from hindsight_redis import Settings
from hindsight_redis.integrations.openai_agents import HindsightSession

session = HindsightSession("chat-p", Settings())
print(json.dumps(asyncio.run(session.get_items())))
session.close()
"""


async def test_another_process_goes_on_with_the_conversation(cli_env: Settings) -> None:
    session = HindsightSession("chat-p", cli_env)
    items: list[TResponseInputItem] = [{"role": "user", "content": "my booking ref is QX7"}]
    try:
        await session.add_items(items)
    finally:
        session.close()
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", READER, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode == 0 and json.loads(out) == items


def test_the_tools_are_the_mcp_tools_specs(shared: MemoryClient) -> None:
    tools = memory_tools(client=shared)
    offered = [s for s in TOOLS if s.scope != "admin"]
    assert [t.name for t in tools] == [s.name for s in offered]
    for tool, spec in zip(tools, offered, strict=True):
        assert isinstance(tool, FunctionTool) and tool.description == spec.description
        assert tool.params_json_schema == spec.arguments.model_json_schema()
    with pytest.raises(ValueError, match="admin tools never offered to a model: memory_erase"):
        memory_tools(client=shared, names=["memory_erase"])


async def test_a_run_reads_the_earlier_items_and_calls_the_memory_tools(
    settings: Settings, shared: MemoryClient, worker: Worker
) -> None:
    tools = memory_tools(client=shared, names=["memory_write", "memory_search"])
    config = RunConfig(tracing_disabled=True)
    writer = Scripted(
        lambda _: call("memory_write", content=FACT, task_type="preference", wait=True),
        lambda items: say(json.loads(items[-1]["output"])["status"]),
    )
    session = HindsightSession("trip", client=shared, remember=True)
    agent = Agent(name="travel", instructions="Help with travel.", model=writer, tools=tools)
    first = await Runner.run(
        agent, "I prefer aisle seats on long flights", session=session, run_config=config
    )
    assert first.final_output == "indexed"

    # A new session object and client: what a second process would have.
    later = HindsightSession("trip", settings)
    reader = Scripted(
        lambda _: call("memory_search", query="seat preference on flights", top_k=3),
        lambda items: say("\n".join(h["content"] for h in json.loads(items[-1]["output"]))),
    )
    try:
        again = agent.clone(model=reader)
        second = await Runner.run(
            again, "Which seat should I book?", session=later, run_config=config
        )
        assert FACT in second.final_output.splitlines()  # the memory the tool found
        earlier = texts(reader.inputs[0])
        assert "I prefer aisle seats on long flights" in earlier and "indexed" in earlier
        assert "memory_write" in earlier  # the tool call of the first run, replayed
        assert len(await later.get_items()) == 2 * 4  # user, call, output, answer per run
    finally:
        later.close()

    # remember=True: the runs' messages are memories of the session too.
    async def remembered() -> bool:
        hits = await shared.acall(
            lambda c: c.search("aisle seats long flights", session_id="trip", mode="keyword")
        )
        return any(h.content == "I prefer aisle seats on long flights" for h in hits)

    await wait_for(remembered)


async def test_a_tool_error_comes_back_to_the_model(shared: MemoryClient, drain: Drain) -> None:
    tools = {t.name: t for t in memory_tools(client=shared)}
    get = tools["memory_get"]
    answer = await get.on_invoke_tool(None, json.dumps({"memory_id": "bad id"}))
    assert "InvalidMemory (not retryable)" in answer
    answer = await get.on_invoke_tool(None, "{}")
    assert answer.startswith("InvalidArgument (retryable")
    assert (await get.on_invoke_tool(None, "[")).startswith("InvalidArgument")
