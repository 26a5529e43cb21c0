"""The MCP server: memory tools for agents, over stdio or streamable HTTP.

A thin adapter: every tool calls ``AsyncMemoryClient`` and returns plain
JSON. Errors of the library become tool errors (``isError``) whose text
says what was wrong and whether a retry can help; nothing is swallowed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations

from hindsight_redis.client import AsyncMemoryClient
from hindsight_redis.errors import HindsightError
from hindsight_redis.settings import Settings

T = TypeVar("T")
INSTRUCTIONS = (
    "Long-term memory shared by many agents. Write facts, preferences, decisions and results "
    "worth recalling later (memory_write); chit-chat and acknowledgements are dropped by the "
    "server. Search before asking the user again (memory_search: hybrid vector + keyword, with "
    "filters). Archive what is wrong or obsolete (memory_forget); it can be restored."
)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


class _Memory:
    """One lazily connected client for the server's lifetime."""

    def __init__(self, settings: Settings) -> None:
        self.client = AsyncMemoryClient(settings)

    async def call(self, action: Callable[[AsyncMemoryClient], Awaitable[T]]) -> T:
        try:
            await self.client.connect()
            return await action(self.client)
        except HindsightError as e:
            hint = "retryable" if e.retryable else "not retryable"
            raise ToolError(f"{type(e).__name__} ({hint}): {e}") from e


def build_server(settings: Settings, *, host: str = "127.0.0.1", port: int = 8765) -> FastMCP:
    """An MCP server exposing the memory tools for ``settings``' namespace."""
    memory = _Memory(settings)
    server = FastMCP("hindsight-redis", instructions=INSTRUCTIONS, host=host, port=port)

    @server.tool(annotations=ToolAnnotations(title="Write a memory", idempotentHint=False))
    async def memory_write(
        content: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        task_type: str | None = None,
        source: str | None = None,
        tags: list[str] | None = None,
        protected: bool = False,
        visibility: Literal["shared", "private"] = "shared",
        importance: float | None = None,
        half_life_days: float | None = None,
        idempotency_key: str | None = None,
        wait: bool = False,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Store a memory in the shared pool; returns its id and status.

        The write is accepted at once; the server filters it (acknowledgements
        and low-value text are dropped), summarizes long text and indexes it.
        wait=true returns only once it is searchable, or says why it was dropped
        (within timeout_s seconds). visibility="private" keeps it to agent_id.
        importance (0..1) is a hint; idempotency_key makes a retried write a no-op.
        half_life_days: how fast it fades when unused (e.g. 365 for a lasting
        preference); by default its task_type's.
        """
        receipt = await memory.call(
            lambda c: c.write(
                content,
                agent_id=agent_id,
                session_id=session_id,
                task_type=task_type,
                source=source,
                tags=tags or (),
                protected=protected,
                visibility=visibility,
                importance=importance,
                half_life_days=half_life_days,
                idempotency_key=idempotency_key,
                wait=wait,
                timeout_s=timeout_s,
            )
        )
        result: dict[str, Any] = _plain(receipt)
        return result

    @server.tool(annotations=ToolAnnotations(title="Search memories", readOnlyHint=True))
    async def memory_search(
        query: str,
        top_k: int = 5,
        mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
        agent_id: str | None = None,
        session_id: str | None = None,
        task_type: str | None = None,
        tags: list[str] | None = None,
        since: float | None = None,
        until: float | None = None,
        include_archived: bool = False,
    ) -> list[dict[str, Any]]:
        """Find memories by meaning and by keywords (names, identifiers, error codes).

        Filters narrow the pool: agent_id, session_id, task_type, tags (all
        must match), since/until (unix seconds). Each hit has its scores.
        """
        hits = await memory.call(
            lambda c: c.search(
                query,
                top_k=top_k,
                mode=mode,
                agent_id=agent_id,
                session_id=session_id,
                task_type=task_type,
                tags=tags,
                since=since,
                until=until,
                include_archived=include_archived,
            )
        )
        found: list[dict[str, Any]] = _plain(hits)
        return found

    @server.tool(annotations=ToolAnnotations(title="Get a memory", readOnlyHint=True))
    async def memory_get(memory_id: str) -> dict[str, Any] | None:
        """One memory by id (active, archived, merged or dropped with its reason), or null."""
        record = await memory.call(lambda c: c.get(memory_id))
        found: dict[str, Any] | None = _plain(record)
        return found

    @server.tool(
        annotations=ToolAnnotations(
            title="Forget a memory", destructiveHint=False, idempotentHint=True
        )
    )
    async def memory_forget(memory_id: str, force: bool = False) -> dict[str, Any]:
        """Archive a memory: it leaves search results; memory_restore brings it back.

        A protected memory is refused unless force=true.
        """
        record: dict[str, Any] = _plain(
            await memory.call(lambda c: c.forget(memory_id, force=force))
        )
        return record

    @server.tool(annotations=ToolAnnotations(title="Restore a memory", idempotentHint=True))
    async def memory_restore(memory_id: str) -> dict[str, Any]:
        """Bring an archived memory back into search results."""
        record: dict[str, Any] = _plain(await memory.call(lambda c: c.restore(memory_id)))
        return record

    @server.tool(annotations=ToolAnnotations(title="Memory statistics", readOnlyHint=True))
    async def memory_stats() -> dict[str, Any]:
        """Counters of the pool: memories active/archived, accepted, indexed, dropped per
        reason, backlog, dead letters."""
        stats: dict[str, Any] = _plain(await memory.call(lambda c: c.stats()))
        return stats

    return server


def run_server(
    settings: Settings, transport: Literal["stdio", "http"], host: str, port: int
) -> None:
    """Serve until interrupted (stdio: until the client closes the pipe)."""
    server = build_server(settings, host=host, port=port)
    server.run("stdio" if transport == "stdio" else "streamable-http")
