"""The soak's traffic: the load benchmark's agents for a long run, and a searcher that asks
through the MCP HTTP server.

Agents are ``benchmarks.load.agents.Agent`` (writes of every kind, retries, direct
searches), holding only their recent history so that their own memory stays flat. The MCP
searcher opens a new MCP session every ``SESSION_CALLS`` searches, as agents come and go:
a server that leaked a session's state would grow with them.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

from benchmarks.load.agents import Agent, Run, locomo_questions
from benchmarks.load.agents import agent_main as load_agent_main

HISTORY = 1000  # contents and keyed items an agent keeps for repeats and retries
SESSION_CALLS = 50  # searches per MCP session


class SoakAgent(Agent):
    """A load agent that forgets all but its recent history."""

    async def step(self) -> None:
        await super().step()
        if len(self.written) > 2 * HISTORY:
            del self.written[:-HISTORY]
        if len(self.keyed) > 2 * HISTORY:
            del self.keyed[:-HISTORY]


def agent_main(run: Run, index: int, ready: Any, go: Any, start: Any) -> None:
    """A spawned soak agent: the load benchmark's agent process, as a ``SoakAgent``."""
    load_agent_main(run, index, ready, go, start, SoakAgent)


def searcher_main(
    url: str, out_dir: str, seconds: float, pause_s: float, go: Any, start: Any
) -> None:
    """A spawned process searching through the MCP server at ``url`` until the run ends;
    each search's latency (or error) to ``<out_dir>/mcp.jsonl``."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    questions = locomo_questions()
    rng = random.Random(11)
    log = open(Path(out_dir) / "mcp.jsonl", "w")  # noqa: SIM115

    def record(kind: str, **fields: Any) -> None:
        log.write(json.dumps({"k": kind, "t": time.time() - start.value, **fields}) + "\n")
        log.flush()

    async def session(deadline: float) -> None:
        async with (
            streamable_http_client(url) as (read, write, _),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            for _ in range(SESSION_CALLS):
                if time.time() >= deadline:
                    return
                args = {"query": rng.choice(questions), "top_k": 5}
                t0 = time.perf_counter()
                result = await mcp.call_tool("memory_search", args)
                ms = (time.perf_counter() - t0) * 1000
                if result.isError:
                    record("e", type="ToolError", msg=str(result.content)[:300], op="mcp_search")
                else:
                    record("s", ms=ms, via="mcp")
                await asyncio.sleep(rng.expovariate(1 / pause_s))

    async def main() -> None:
        await asyncio.to_thread(go.wait)
        deadline = start.value + seconds
        await asyncio.sleep(max(0.0, start.value - time.time()))
        while time.time() < deadline:
            try:
                await session(deadline)
            except Exception as e:  # counted, and a new session tried
                record("e", type=type(e).__name__, msg=str(e)[:300], op="mcp_session")
                await asyncio.sleep(1.0)
        log.close()

    asyncio.run(main())
