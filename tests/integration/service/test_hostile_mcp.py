"""Hostile arguments to the MCP tools: a tool error that names the problem, or a right answer.

A real FastMCP server in process (``build_server``) behind an SDK session, and
a real stdio server fed raw JSON-RPC lines (bytes that are not UTF-8, escapes
of lone surrogates, a line that is not JSON). Strategies in ``hostile.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.core.checks import MODES
from hindsight_redis.service.mcp import build_server
from tests.integration.helpers import Drain
from tests.integration.hostile import (
    PROPERTY,
    Pool,
    bounded,
    hostile_text,
    identifier,
    joined,
    json_junk,
    rarely,
    tags_or,
    text_or,
    top_k,
    when,
    write_fields_or,
    write_pool,
)

VALIDATION = re.compile(r"\d+ validation errors? for memory_\w+Arguments\n\w+")


@pytest.fixture
async def pool(client: AsyncMemoryClient, settings: Settings, drain: Drain) -> Pool:
    """Shared and private memories in two namespaces, indexed (once per test)."""
    return await write_pool(client, settings, drain)


# -- MCP tools ---------------------------------------------------------------------


@pytest.fixture
async def mcp_session(settings: Settings) -> AsyncIterator[ClientSession]:
    """A real FastMCP server in process, acting as agent ``y``, and an SDK session on it.

    The session lives in a task of its own: its task group must be left by the
    task that entered it, and a fixture's teardown runs in another.
    """
    server, memory = build_server(settings.model_copy(update={"agent_id": "y"}))
    opened: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        async with create_connected_server_and_client_session(server) as session:
            opened.set_result(session)
            await done.wait()

    holder = asyncio.create_task(hold())
    try:
        yield await asyncio.wait_for(opened, 30)
    finally:
        done.set()
        await asyncio.wait_for(holder, 30)
        await memory.aclose()


def _tool_text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _tool_data(result: Any) -> Any:
    if result.structuredContent is not None:
        data = result.structuredContent
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(_tool_text(result))


hostile_id = st.one_of(hostile_text, identifier, json_junk)
TOOL_ARGS = {
    "memory_search": st.fixed_dictionaries(
        {"query": rarely(joined, st.one_of(hostile_text, json_junk))},
        optional={
            "top_k": top_k,
            "mode": rarely(st.sampled_from(MODES), hostile_text),
            "agent_id": text_or(json_junk),
            "session_id": text_or(json_junk),
            "tags": tags_or(json_junk),
            "since": when,
            "until": when,
            "include_archived": rarely(st.booleans(), json_junk),
            "max_tokens": rarely(st.integers(1, 10**6), st.one_of(st.integers(-5, 0), json_junk)),
        },
    ),
    "memory_write": write_fields_or(json_junk).map(lambda f: {**f, "wait": True, "timeout_s": 20}),
    "memory_get": st.fixed_dictionaries({"memory_id": hostile_id}),
    "memory_forget": st.fixed_dictionaries(
        {"memory_id": hostile_id}, optional={"force": st.one_of(st.booleans(), json_junk)}
    ),
    "memory_restore": st.fixed_dictionaries({"memory_id": hostile_id}),
    "memory_stats": st.dictionaries(st.text(max_size=5), json_junk, max_size=2),
}


@hsettings(PROPERTY, max_examples=120)
@given(
    call=st.sampled_from(sorted(TOOL_ARGS)).flatmap(lambda n: st.tuples(st.just(n), TOOL_ARGS[n]))
)
async def test_mcp_tools_answer_hostile_arguments_with_errors_that_name_the_problem(
    mcp_session: ClientSession, pool: Pool, worker: Worker, call: tuple[str, dict[str, Any]]
) -> None:
    name, args = call
    result = await bounded(mcp_session.call_tool(name, args))
    text = _tool_text(result)
    if result.isError:
        assert text.startswith(f"Error executing tool {name}: "), text
        problem = text.split(": ", 1)[1]
        known = ("InvalidQuery", "InvalidMemory", "InvalidArgument", "NotFound")
        assert problem.startswith(known) or VALIDATION.match(problem), text
        for raw in ("Traceback", "redis.exceptions", "ResponseError", "codec can't"):
            assert raw not in text, text
        return
    data = _tool_data(result)
    event(f"{name}: answered")
    seen = pool.visible_to("y")
    if name == "memory_search":
        for hit in data:
            assert hit["id"] in seen and hit["content"] == seen[hit["id"]], hit
    elif name == "memory_get":
        assert data is None, data  # hostile ids name no memory y may read
    elif name == "memory_write":
        assert data["status"] in ("indexed", "merged", "dropped"), data
        if data["status"] == "indexed" and not data["duplicate"]:
            stored = _tool_data(
                await mcp_session.call_tool("memory_get", {"memory_id": data["id"]})
            )
            assert args["content"] in (stored["content"], stored["original"]), "content altered"
            assert stored["agent_id"] == "y"  # the session's identity, whatever agent_id says
            mine = pool.private_y if stored["visibility"] == "private" else pool.shared
            mine[data["id"]] = stored["content"]
    elif name == "memory_stats":
        assert data["memories"]["active"] >= len(pool.shared) + len(pool.private_x)
    else:
        raise AssertionError(f"{name} of a hostile id succeeded: {data}")


# -- the stdio transport -----------------------------------------------------------


class _StdioServer:
    """``hindsight-redis mcp --transport stdio`` driven line by line, raw JSON-RPC."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.replies: dict[int, dict[str, Any]] = {}

    async def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def reply(self, n: int, timeout_s: float) -> dict[str, Any] | None:
        """The reply to request ``n``, or None when none comes within ``timeout_s`` (0: none)."""
        assert self.proc.stdout is not None
        if timeout_s <= 0:
            return self.replies.get(n)
        try:
            async with asyncio.timeout(timeout_s):
                while n not in self.replies:
                    message = json.loads(await self.proc.stdout.readline())
                    if "id" in message:
                        self.replies[message["id"]] = message
        except TimeoutError:
            return None
        return self.replies[n]

    async def call(self, n: int, tool: str, args_json: bytes, timeout_s: float = 60) -> Any:
        head = f'{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"{tool}",'
        await self.send(head.encode() + b'"arguments":' + args_json + b"}}")
        return await self.reply(n, timeout_s)


def _stdio_text(reply: dict[str, Any]) -> str:
    return str(reply["result"]["content"][0]["text"])


async def test_stdio_server_survives_invalid_utf8_and_lone_surrogates(settings: Settings) -> None:
    env = {**os.environ, **settings.to_env(), "HINDSIGHT_AGENT_ID": "ops"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "hindsight_redis.cli",
        "mcp",
        "--transport",
        "stdio",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    server = _StdioServer(proc)
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        }
        await server.send(json.dumps(init).encode())
        assert await server.reply(0, 60) is not None
        await server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        # Bytes that are not UTF-8: the transport reads them as U+FFFD, the write is indexed.
        raw = b'{"content":"billing \xff\xfe\xc3 moved to eu-west-1","wait":true}'
        written = await server.call(1, "memory_write", raw)
        assert written is not None and not written["result"].get("isError"), written
        assert "indexed" in _stdio_text(written)
        # JSON escapes of lone surrogates: the SDK's own parser refuses such a line (and,
        # knowing no id, answers nothing); should one get through, the tools refuse it.
        hostile = {
            2: ("memory_write", b'{"content":"billing \\ud800 moved to eu-west-1"}'),
            3: ("memory_search", b'{"query":"\\udfff billing","tags":["\\ud83d"]}'),
            4: ("memory_get", b'{"memory_id":"\\ud800"}'),
        }
        for n, (tool, args) in hostile.items():
            await server.call(n, tool, args, timeout_s=0)
        await server.send(b"this line is not JSON at all \xff")
        hits = await server.call(
            5, "memory_search", b'{"query":"billing eu-west-1","mode":"keyword"}'
        )
        assert hits is not None and not hits["result"].get("isError"), hits
        for n in hostile:
            reply = server.replies.get(n)
            if reply is not None and "result" in reply:
                assert reply["result"]["isError"], reply
                text = _stdio_text(reply)
                assert "lone surrogate" in text or "invalid memory id" in text, text
        contents = [h["content"] for h in hits["result"]["structuredContent"]["result"]]
        assert contents == ["billing \ufffd\ufffd\ufffd moved to eu-west-1"]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            _, err = await asyncio.wait_for(proc.communicate(), 60)
        except TimeoutError:
            proc.kill()
            raise
    assert proc.returncode == 0 and b"Traceback" not in err, err[-3000:]
