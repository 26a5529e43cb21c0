"""The MCP server: memory tools for agents, over stdio or streamable HTTP.

A thin adapter: every tool calls ``AsyncMemoryClient`` and returns plain
JSON. Errors of the library become tool errors (``isError``) whose text
says what was wrong and whether a retry can help; nothing is swallowed.

Each call acts as a ``Principal``: over HTTP the one of the request's bearer
token (``http_service`` checks it), otherwise the settings' namespace and
``agent_id``. A tool argument can narrow a search, never widen who the
caller is or what it may see; only an admin token may record another agent
as a memory's writer. ``serve`` also runs an in-process worker unless told
not to, so a lone ``hindsight-redis mcp`` indexes what it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations
from redis.asyncio import Redis

from hindsight_redis.access_tokens import Principal, Scope
from hindsight_redis.client import AsyncMemoryClient
from hindsight_redis.errors import HindsightError
from hindsight_redis.settings import Settings

if TYPE_CHECKING:
    from hindsight_redis.pipeline.worker import Worker

log = logging.getLogger(__name__)
T = TypeVar("T")
PRINCIPAL_STATE = "hindsight_principal"
"""Where ``http_service`` leaves a request's ``Principal`` in the ASGI scope's state."""

INSTRUCTIONS = (
    "Long-term memory shared by many agents, kept across conversations. Call memory_search "
    "before answering whenever the user refers to the past ('last time', 'as before', 'like "
    "we did', 'my preference', a name or an error seen earlier) or before asking them again "
    "for something they may have said already. Call memory_write when the user states a "
    "preference or a fact about themselves or their project, when a decision is made, and "
    "when a complex task is finished (what was done, what worked). Never write chit-chat, "
    "greetings or acknowledgements; the server drops them anyway. memory_forget archives "
    "what is wrong or obsolete (memory_restore brings it back)."
)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


class ToolClients:
    """The tools' clients: one per namespace, all on one lazily opened connection."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.default = Principal(settings.namespace, settings.agent_id, "write")
        self._clients: dict[str, AsyncMemoryClient] = {}
        self._redis: Redis | None = None
        self._lock = asyncio.Lock()
        self._closers: list[Callable[[], Awaitable[None]]] = []

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Also await ``closer()`` in ``aclose`` (e.g. the metrics app's connection)."""
        self._closers.append(closer)

    def principal(self, ctx: Context[Any, Any, Any]) -> Principal:
        """Who this call acts as: the request's token, else the settings' identity."""
        request = ctx.request_context.request
        scope = getattr(request, "scope", None)
        if isinstance(scope, dict):
            found = scope.get("state", {}).get(PRINCIPAL_STATE)
            if isinstance(found, Principal):
                return found
        return self.default

    async def client(self, namespace: str) -> AsyncMemoryClient:
        """The client of ``namespace`` (sharing the connection of the first one)."""
        async with self._lock:
            if namespace in self._clients:
                return self._clients[namespace]
            if self._redis is None:
                first = AsyncMemoryClient(self.settings.model_copy(update={"namespace": namespace}))
                self._redis = await first.connect()
                self._clients[namespace] = first
                return first
            settings = self.settings.model_copy(update={"namespace": namespace})
            client = AsyncMemoryClient(settings, redis=self._redis)
            client.profile = next(iter(self._clients.values())).profile
            self._clients[namespace] = client
            return client

    async def call(
        self,
        ctx: Context[Any, Any, Any],
        needed: Scope,
        action: Callable[[AsyncMemoryClient, Principal], Awaitable[T]],
    ) -> T:
        """Run ``action`` as the call's principal, once its scope allows ``needed``."""
        principal = self.principal(ctx)
        if not principal.allows(needed):
            raise ToolError(
                f"PermissionDenied (not retryable): this token's scope is {principal.scope!r}; "
                f"this tool needs {needed!r}"
            )
        try:
            return await action(await self.client(principal.namespace), principal)
        except HindsightError as e:
            hint = "retryable" if e.retryable else "not retryable"
            raise ToolError(f"{type(e).__name__} ({hint}): {e}") from e

    async def aclose(self) -> None:
        """Close the shared connection (and whatever asked to be closed with it)."""
        for closer in self._closers:
            await closer()
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        self._redis = None


def _writer(principal: Principal, agent_id: str | None) -> str | None:
    """Who a write records as its author: the caller, or anyone for an admin."""
    if principal.scope == "admin" and agent_id:
        return agent_id
    return principal.agent_id or None


def build_server(
    settings: Settings, *, host: str = "127.0.0.1", port: int = 8765
) -> tuple[FastMCP, ToolClients]:
    """An MCP server exposing the memory tools, and the clients its tools use."""
    memory = ToolClients(settings)
    server = FastMCP("hindsight-redis", instructions=INSTRUCTIONS, host=host, port=port)

    @server.tool(annotations=ToolAnnotations(title="Write a memory", idempotentHint=False))
    async def memory_write(
        ctx: Context[Any, Any, Any],
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
        """Remember something for later conversations; returns the memory's id and status.

        Call it when the user states a preference ("I prefer...", "always use..."), a
        fact about themselves or their project, when a decision is made, or when a
        complex task is finished (what was done and what worked). Do not call it for
        chit-chat, greetings or acknowledgements: they are dropped.
        The server filters, summarizes long text and indexes it; wait=true returns once
        it is searchable, or says why it was dropped (within timeout_s seconds).
        visibility="private": only you will see it. protected=true: never forgotten
        automatically. importance (0..1) is a hint; idempotency_key makes a retried
        write a no-op; half_life_days: how fast it fades when unused (e.g. 365 for a
        lasting preference). task_type e.g. "preference", "dialogue", "code".
        agent_id: ignored unless your token is an admin token (you are the writer).
        """
        receipt = await memory.call(
            ctx,
            "write",
            lambda c, p: c.write(
                content,
                agent_id=_writer(p, agent_id),
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
                as_agent=p.agent_id,
            ),
        )
        result: dict[str, Any] = _plain(receipt)
        return result

    @server.tool(annotations=ToolAnnotations(title="Search memories", readOnlyHint=True))
    async def memory_search(
        ctx: Context[Any, Any, Any],
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
        max_tokens: int | None = None,
    ) -> list[dict[str, Any]]:
        """Recall what was said or learned before, by meaning and by keywords.

        Call it when the user refers to the past ("last time", "as before", "like we
        did", "my preference", a person, project or error seen earlier) and before
        asking the user for something they may have told you already. Keywords find
        names, identifiers and error codes exactly. You see shared memories and your
        own private ones. Filters narrow the pool: agent_id (written by that agent),
        session_id, task_type, tags (all must match), since/until (unix seconds).
        max_tokens: stop adding hits before their content passes that many tokens.
        """
        hits = await memory.call(
            ctx,
            "read",
            lambda c, p: c.search(
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
                max_tokens=max_tokens,
                as_agent=p.agent_id,
            ),
        )
        found: list[dict[str, Any]] = _plain(hits)
        return found

    @server.tool(annotations=ToolAnnotations(title="Get a memory", readOnlyHint=True))
    async def memory_get(ctx: Context[Any, Any, Any], memory_id: str) -> dict[str, Any] | None:
        """One memory by id (active, archived, merged or dropped with its reason), or null."""
        record = await memory.call(ctx, "read", lambda c, p: c.get(memory_id, as_agent=p.agent_id))
        found: dict[str, Any] | None = _plain(record)
        return found

    @server.tool(
        annotations=ToolAnnotations(
            title="Forget a memory", destructiveHint=False, idempotentHint=True
        )
    )
    async def memory_forget(
        ctx: Context[Any, Any, Any], memory_id: str, force: bool = False
    ) -> dict[str, Any]:
        """Archive a memory that is wrong or obsolete: it leaves search results, and
        memory_restore brings it back. A protected memory is refused unless force=true."""
        record: dict[str, Any] = _plain(
            await memory.call(
                ctx, "write", lambda c, p: c.forget(memory_id, force=force, as_agent=p.agent_id)
            )
        )
        return record

    @server.tool(annotations=ToolAnnotations(title="Restore a memory", idempotentHint=True))
    async def memory_restore(ctx: Context[Any, Any, Any], memory_id: str) -> dict[str, Any]:
        """Bring an archived (forgotten) memory back into search results."""
        record: dict[str, Any] = _plain(
            await memory.call(ctx, "write", lambda c, p: c.restore(memory_id, as_agent=p.agent_id))
        )
        return record

    @server.tool(annotations=ToolAnnotations(title="Memory statistics", readOnlyHint=True))
    async def memory_stats(ctx: Context[Any, Any, Any]) -> dict[str, Any]:
        """Counters of the pool: memories active/archived, accepted, indexed, dropped per
        reason, backlog, dead letters. For operators; not needed to answer users."""
        stats: dict[str, Any] = _plain(await memory.call(ctx, "read", lambda c, p: c.stats()))
        return stats

    return server, memory


@contextlib.asynccontextmanager
async def background_workers(
    settings: Settings, count: int, *, all_namespaces: bool = False
) -> AsyncIterator[None]:
    """``count`` in-process workers for the life of the block (0: none).

    A worker that fails is logged and started again after a pause; the server
    keeps answering meanwhile (writes are accepted, and indexed once it is back).
    """
    workers = [_in_process_worker(settings, all_namespaces) for _ in range(count)]

    async def supervise(worker: Worker) -> None:
        while True:
            try:
                await worker.run_async()
                return
            except HindsightError as e:
                log.warning("in-process worker stopped (%s); restarting in 2 s", e)
                await asyncio.sleep(2.0)

    tasks = [asyncio.create_task(supervise(w), name="hindsight-worker") for w in workers]
    try:
        yield
    finally:
        for worker in workers:
            worker.stop()
        for task in tasks:
            try:
                await asyncio.wait_for(task, timeout=10.0)
            except (TimeoutError, asyncio.CancelledError, HindsightError):
                task.cancel()


def _in_process_worker(settings: Settings, all_namespaces: bool) -> Worker:
    """A worker of the settings' namespace, or of every namespace (HTTP: tokens choose it)."""
    from hindsight_redis.pipeline.worker import Worker

    return Worker(settings, namespaces="*" if all_namespaces else None)


async def serve_stdio(settings: Settings, *, workers: int = 1) -> None:
    """Serve over stdio until the client closes the pipe; identity from ``settings``."""
    server, memory = build_server(settings)
    try:
        async with background_workers(settings, workers):
            await server.run_stdio_async()
    finally:
        await memory.aclose()


def run_server(
    settings: Settings,
    transport: Literal["stdio", "http"],
    host: str,
    port: int,
    *,
    workers: int = 1,
) -> None:
    """Serve until interrupted (stdio: until the client closes the pipe)."""
    if transport == "stdio":
        asyncio.run(serve_stdio(settings, workers=workers))
    else:
        from hindsight_redis.http_service import serve_http

        asyncio.run(serve_http(settings, host=host, port=port, workers=workers))
