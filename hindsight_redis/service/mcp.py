"""The MCP server: memory tools for agents, over stdio or streamable HTTP.

A thin adapter: every tool calls ``AsyncMemoryClient`` and returns plain
JSON. Errors of the library become tool errors (``isError``) whose text
says what was wrong and whether a retry can help; nothing is swallowed.
Resources (``memory://<namespace>/...``, ``service.resources``) and prompts
(``recall``, ``remember``, ``service.prompts``) go through the same calls, so
they follow the tools' token rules; their errors are MCP errors.

Each call acts as a ``Principal``: over HTTP the one of the request's bearer
token (``http_service`` checks it), otherwise the settings' namespace and
``agent_id``. A tool argument can narrow a search, never widen who the
caller is or what it may see; only an admin token may record another agent
as a memory's writer, or erase (``memory_erase``). What a token's call
changes is recorded in the audit trail as identified by ``token``.
``serve_stdio`` also runs an in-process worker unless told not to, so a lone
``hindsight-redis mcp`` indexes what it is given; ``service.run`` picks the
transport.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.types import GetPromptResult, ToolAnnotations
from mcp.types import Prompt as MCPPrompt
from mcp.types import Resource as MCPResource
from mcp.types import ResourceTemplate as MCPResourceTemplate
from mcp.types import Tool as MCPTool
from pydantic import AnyUrl
from redis.asyncio import Redis

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.core.version import package_version
from hindsight_redis.errors import HindsightError
from hindsight_redis.service import prompts, resources
from hindsight_redis.service.hosts import host_security
from hindsight_redis.service.tokens import Principal, Scope
from hindsight_redis.service.tools import TOOLS, ToolSpec
from hindsight_redis.service.workers import background_workers
from hindsight_redis.settings import Settings, is_loopback
from hindsight_redis.trust.audit import identified_by

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
        *,
        fail: Callable[[str, HindsightError | None], Exception] = lambda text, _: ToolError(text),
    ) -> T:
        """Run ``action`` as the call's principal, once its scope allows ``needed``.

        What the caller may not do, or what fails, raises ``fail(text, error)``
        (a tool error by default; resources and prompts raise MCP errors).
        """
        principal = self.principal(ctx)
        if not principal.allows(needed):
            raise fail(
                f"PermissionDenied (not retryable): this token's scope is {principal.scope!r}; "
                f"this needs {needed!r}",
                None,
            )
        try:
            client = await self.client(principal.namespace)
            if not principal.token_id:
                return await action(client, principal)
            with identified_by("token"):
                return await action(client, principal)
        except HindsightError as e:
            hint = "retryable" if e.retryable else "not retryable"
            raise fail(f"{type(e).__name__} ({hint}): {e}", e) from e

    async def aclose(self) -> None:
        """Close the shared connection (and whatever asked to be closed with it)."""
        for closer in self._closers:
            await closer()
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        self._redis = None


class ScopedServer(FastMCP):
    """FastMCP whose ``tools/list`` offers a caller only the tools its scope allows: the
    admin tools (the review of held writes) are never offered to read or write tokens,
    whose calls to them are refused anyway (``ToolClients.call``). Resources and prompts
    are listed, read and filled per caller likewise."""

    def __init__(self, memory: ToolClients, **options: Any) -> None:
        self.memory = memory
        self.scopes: dict[str, Scope] = {spec.name: spec.scope for spec in TOOLS}
        super().__init__("hindsight-redis", instructions=INSTRUCTIONS, **options)
        self._mcp_server.version = package_version()  # serverInfo (else the SDK's own)

    async def list_tools(self) -> list[MCPTool]:
        """The tools, less those the caller's scope does not allow."""
        tools = await super().list_tools()
        try:
            principal = self.memory.principal(self.get_context())
        except (LookupError, ValueError):  # outside a request: no caller to list them for
            return tools
        return [t for t in tools if principal.allows(self.scopes.get(t.name, "admin"))]

    def _caller(self) -> tuple[Principal, resources.Caller]:
        """The request's principal, and how resources and prompts act as it."""
        ctx = self.get_context()

        def call(needed: Scope, action: resources.Action) -> Awaitable[Any]:
            return self.memory.call(ctx, needed, action, fail=resources.mcp_error)

        return self.memory.principal(ctx), call

    async def list_resources(self) -> list[MCPResource]:
        """The fixed resources of the caller's namespace that its scope allows."""
        return resources.listed(self._caller()[0])

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        """The resource templates: a memory by id."""
        return resources.templates()

    async def read_resource(self, uri: AnyUrl | str) -> Iterable[ReadResourceContents]:
        """A ``memory://`` resource as JSON text (``service.resources``)."""
        text = await resources.read(*self._caller(), str(uri))
        return [ReadResourceContents(content=text, mime_type=resources.JSON_TYPE)]

    async def list_prompts(self) -> list[MCPPrompt]:
        """The prompts the caller's scope allows (``service.prompts``)."""
        return prompts.listed(self._caller()[0])

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> GetPromptResult:
        """A prompt filled in (``service.prompts``); its errors are MCP errors."""
        return await prompts.render(*self._caller(), name, arguments)


def build_server(
    settings: Settings, *, host: str = "127.0.0.1", port: int = 8765
) -> tuple[FastMCP, ToolClients]:
    """An MCP server with the memory tools (``service.tools.TOOLS``), and the clients they use."""
    memory = ToolClients(settings)
    # On loopback the SDK checks Host and Origin (DNS rebinding); beyond it, tokens guard.
    security = host_security(host) if is_loopback(host) else None
    server = ScopedServer(memory, host=host, port=port, transport_security=security)
    for spec in TOOLS:
        hints = ToolAnnotations(
            title=spec.title,
            readOnlyHint=spec.read_only or None,
            idempotentHint=None if spec.read_only else spec.idempotent,
            destructiveHint=spec.destructive,
        )
        server.add_tool(
            _tool_function(spec, memory),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=hints,
        )
    return server, memory


def _tool_function(spec: ToolSpec, memory: ToolClients) -> Callable[..., Awaitable[Any]]:
    """The function FastMCP registers for ``spec``: its signature is the spec's arguments.

    FastMCP reads a tool's input schema from its function's signature, so the
    signature is made from ``spec.arguments`` (plus the request context).
    """

    async def tool(ctx: Context[Any, Any, Any], **arguments: Any) -> Any:
        args = spec.arguments.model_validate(arguments)
        return await memory.call(ctx, spec.scope, lambda c, p: spec.run(c, p, args))

    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    parameters = spec.parameters()
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [context, *parameters], return_annotation=spec.returns
    )
    tool.__annotations__ = {
        "ctx": Context,
        **{p.name: p.annotation for p in parameters},
        "return": spec.returns,
    }
    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.description
    return tool


async def serve_stdio(settings: Settings, *, workers: int = 1) -> None:
    """Serve over stdio until the client closes the pipe; identity from ``settings``."""
    server, memory = build_server(settings)
    try:
        async with background_workers(settings, workers):
            await server.run_stdio_async()
    finally:
        await memory.aclose()
