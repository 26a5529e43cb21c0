"""The MCP server through real MCP sessions (the SDK's client), stdio and HTTP."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from hindsight_redis import Settings, Worker
from hindsight_redis.core.version import package_version
from hindsight_redis.redis.server import free_port
from tests.integration.helpers import until_answers

FACT = "The billing-service-v2 deploy failed with ERR_CONN_RESET; bob rolled it back at 14:05"


def _env(settings: Settings, agent: str = "ops") -> dict[str, str]:
    return {**os.environ, **settings.to_env(), "HINDSIGHT_AGENT_ID": agent}


def _data(result: Any) -> Any:
    """The JSON a tool returned (structured content, else its text)."""
    if result.structuredContent is not None:
        data = result.structuredContent
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _exercise(session: ClientSession, me: str = "ops") -> None:
    hello = await session.initialize()
    info = hello.serverInfo
    assert (info.name, info.version) == ("hindsight-redis", package_version())  # not the SDK's
    assert info.version == importlib.metadata.version("hindsight-redis")
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert {
        "memory_write",
        "memory_search",
        "memory_forget",
        "memory_restore",
        "memory_get",
    } <= set(tools)
    for tool in tools.values():  # invalid schemas make models call tools wrongly
        jsonschema.Draft202012Validator.check_schema(tool.inputSchema)
        assert tool.description
    forged = {"content": FACT, "agent_id": "coder", "wait": True, "timeout_s": 20}
    written = _data(await session.call_tool("memory_write", forged))
    assert written["status"] == "indexed"
    dropped = _data(
        await session.call_tool("memory_write", {"content": "好的，收到", "wait": True})
    )
    assert dropped["status"] == "dropped" and dropped["reason"].startswith("rule:")
    secret = "The staging database password rotates every Monday at 06:00 UTC"
    private = {"content": secret, "visibility": "private", "wait": True}
    assert _data(await session.call_tool("memory_write", private))["status"] == "indexed"
    own = {"query": "staging password"}
    assert _data(await session.call_tool("memory_search", own))[0]["content"] == secret
    hits = _data(
        await session.call_tool("memory_search", {"query": "ERR_CONN_RESET", "mode": "keyword"})
    )
    # The writer is the session's identity: an agent_id argument cannot forge it.
    assert hits[0]["id"] == written["id"] and hits[0]["agent_id"] == me
    assert hits[0]["keyword"] is not None
    forgotten = _data(await session.call_tool("memory_forget", {"memory_id": written["id"]}))
    assert forgotten["status"] == "archived"
    assert (
        _data(
            await session.call_tool("memory_search", {"query": "ERR_CONN_RESET", "mode": "keyword"})
        )
        == []
    )
    restored = _data(await session.call_tool("memory_restore", {"memory_id": written["id"]}))
    assert restored["status"] == "active"
    kept = {
        "content": "Always answer alice in Chinese",
        "protected": True,
        "wait": True,
        "half_life_days": 365,
        "occurred_at": 1683554160,
    }
    guarded = _data(await session.call_tool("memory_write", kept))
    got = _data(await session.call_tool("memory_get", {"memory_id": guarded["id"]}))
    assert got["occurred_at"] == 1683554160.0
    dated = {
        "query": "answer alice Chinese",
        "occurred_since": 1683500000,
        "occurred_until": 1683600000,
    }
    found = _data(await session.call_tool("memory_search", dated))
    assert [(h["id"], h["occurred_at"]) for h in found] == [(guarded["id"], 1683554160.0)]
    bad = await session.call_tool("memory_write", {"content": "x y z", "occurred_at": 1e13})
    assert bad.isError and "milliseconds" in bad.content[0].text
    refused = await session.call_tool("memory_forget", {"memory_id": guarded["id"]})
    assert refused.isError and "MemoryProtected" in refused.content[0].text
    forced = {"memory_id": guarded["id"], "force": True}
    assert _data(await session.call_tool("memory_forget", forced))["status"] == "archived"
    counts = _data(await session.call_tool("memory_stats", {}))["memories"]
    assert counts["archived"] == 1 and counts["active"] >= 2
    bad = await session.call_tool("memory_write", {"content": "   "})
    assert bad.isError and "content must not be empty" in bad.content[0].text
    bad = await session.call_tool("memory_search", {"query": "x", "mode": "fuzzy"})
    assert bad.isError


async def test_stdio_session_indexes_with_no_worker_running(settings: Settings) -> None:
    # No worker fixture: the server's own in-process worker indexes the writes.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hindsight_redis.cli", "mcp", "--transport", "stdio"],
        env=_env(settings),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await _exercise(session)


@asynccontextmanager
async def _http_server(
    settings: Settings, command: str = "mcp", *extra: str
) -> AsyncIterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``hindsight-redis <command> ... --mcp-port P``; yield its MCP URL once it answers."""
    port = free_port()
    args = [sys.executable, "-m", "hindsight_redis.cli", command, *extra]
    proc = subprocess.Popen(
        [*args, "--mcp-port", str(port)],
        env=_env(settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await until_answers(url)
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)


async def test_streamable_http_session_with_external_workers_only(
    settings: Settings, worker: Worker
) -> None:
    async with (
        _http_server(settings, "mcp", "--transport", "http", "--workers", "0") as (url, _),
        streamable_http_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await _exercise(session)


async def test_up_runs_workers_behind_the_mcp_server(settings: Settings) -> None:
    async with _http_server(settings, "up", "--workers", "1") as (url, proc):
        async with (
            streamable_http_client(url) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            args = {"content": FACT, "wait": True}
            written = _data(await session.call_tool("memory_write", args))
            assert written["status"] == "indexed"  # indexed by the worker `up` started
        ps = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True, text=True
        )
        children = [int(pid) for pid in ps.stdout.split()]
        assert len(children) == 1
    for pid in children:  # stopped with `up`, not orphaned
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"worker {pid} outlived `up`")
