"""MCP resources: a namespace's memory as addresses a client can list and read.

    memory://<namespace>/stats        the pool's counters (as memory_stats)
    memory://<namespace>/conflicts    open contradictions the caller can see (memory_conflicts)
    memory://<namespace>/held         writes held for review, admin only (memory_review)
    memory://<namespace>/<id>         one memory (memory_get), a resource template

Each reads through the tool it names, so a resource follows that tool's token
rules: the scope it needs, what the caller may see (another agent's private
memory, a held write, is not found). A token's namespace is fixed: a URI
naming another namespace is refused. Contents are JSON text. Errors are MCP
errors whose text says what was wrong, as the tools' do.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlsplit

from mcp.shared.exceptions import McpError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, ErrorData
from mcp.types import Resource as MCPResource
from mcp.types import ResourceTemplate as MCPResourceTemplate

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.errors import HindsightError, InvalidArgument, NotFound
from hindsight_redis.service.tokens import Principal, Scope
from hindsight_redis.service.tools import TOOLS, ToolSpec

SCHEME = "memory"
JSON_TYPE = "application/json"
RESOURCE_NOT_FOUND = -32002
"""The MCP specification's error code for a resource that does not exist."""
Action = Callable[[AsyncMemoryClient, Principal], Awaitable[Any]]


class Caller(Protocol):
    """Runs an action as the request's principal once its scope allows ``needed`` (failing
    with ``mcp_error``): ``ToolClients.call`` bound to the request."""

    def __call__(self, needed: Scope, action: Action) -> Awaitable[Any]: ...


def mcp_error(text: str, error: HindsightError | None = None) -> McpError:
    """The MCP error for ``text``: a refusal (no ``error``), bad arguments, a missing
    memory, or a failure of the server."""
    if error is None:
        code = INVALID_REQUEST
    elif isinstance(error, NotFound):
        code = RESOURCE_NOT_FOUND
    elif isinstance(error, InvalidArgument):
        code = INVALID_PARAMS
    else:
        code = INTERNAL_ERROR
    return McpError(ErrorData(code=code, message=text))


def tool(name: str) -> ToolSpec:
    """The tool spec called ``name``."""
    return next(spec for spec in TOOLS if spec.name == name)


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A fixed resource of every namespace: the read of a tool without arguments."""

    path: str
    title: str
    description: str
    tool: ToolSpec
    arguments: dict[str, Any]


RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec(
        "stats",
        "Memory statistics",
        "Counters of the namespace: memories active/archived, accepted, indexed, dropped per "
        "reason, backlog, dead letters.",
        tool("memory_stats"),
        {},
    ),
    ResourceSpec(
        "conflicts",
        "Open contradictions",
        "Memories flagged as contradicting another (newest first, at most 100), each with the "
        "ids it conflicts with; memory_resolve_conflict settles them.",
        tool("memory_conflicts"),
        {"limit": 100},
    ),
    ResourceSpec(
        "held",
        "Writes held for review",
        "Writes held for review instead of being stored (newest first, at most 100), each with "
        "its hold_reason; memory_approve or memory_reject decides. Admin tokens only.",
        tool("memory_review"),
        {"state": "held", "limit": 100},
    ),
)
"""The fixed resources, in the order a client lists them."""
MEMORY = tool("memory_get")
TEMPLATE = MCPResourceTemplate(
    uriTemplate=f"{SCHEME}://{{namespace}}/{{memory_id}}",
    name="memory",
    title="A memory",
    description=(
        "One memory by id, as memory_get returns it (active, archived, merged or dropped with "
        "its reason). namespace: your token's. Another agent's private memory, or a write held "
        "for review, is not found."
    ),
    mimeType=JSON_TYPE,
)


def uri(namespace: str, path: str) -> str:
    """The address of ``path`` (a fixed resource's or a memory id) in ``namespace``."""
    return f"{SCHEME}://{quote(namespace, safe='')}/{quote(path, safe='')}"


def parse(address: str) -> tuple[str, str]:
    """``(namespace, path)`` of a ``memory://`` address; an MCP error for anything else."""
    parts = urlsplit(address)
    path = parts.path.removeprefix("/")
    if parts.scheme != SCHEME or not parts.netloc or not path or "/" in path or parts.query:
        raise McpError(
            ErrorData(
                code=RESOURCE_NOT_FOUND,
                message=f"NotFound (not retryable): no resource {address!r}; "
                f"the resources are {SCHEME}://<namespace>/stats, conflicts, held or <id>",
            )
        )
    return unquote(parts.netloc), unquote(path)


def listed(principal: Principal) -> list[MCPResource]:
    """The fixed resources of the caller's namespace that its scope allows."""
    return [
        MCPResource(
            uri=uri(principal.namespace, spec.path),
            name=spec.path,
            title=spec.title,
            description=spec.description,
            mimeType=JSON_TYPE,
        )
        for spec in RESOURCES
        if principal.allows(spec.tool.scope)
    ]


def templates() -> list[MCPResourceTemplate]:
    """The resource templates (one: a memory by id)."""
    return [TEMPLATE]


async def read(principal: Principal, call: Caller, address: str) -> str:
    """The JSON text of the resource at ``address``, read as ``principal`` through ``call``."""
    namespace, path = parse(address)
    if namespace != principal.namespace:
        raise mcp_error(
            f"PermissionDenied (not retryable): this token's namespace is "
            f"{principal.namespace!r}, not {namespace!r}"
        )
    fixed = next((spec for spec in RESOURCES if spec.path == path), None)
    spec, arguments = (fixed.tool, fixed.arguments) if fixed else (MEMORY, {"memory_id": path})
    args = spec.arguments.model_validate(arguments)
    found = await call(spec.scope, lambda c, p: spec.run(c, p, args))
    if found is None:
        raise mcp_error(
            f"NotFound (not retryable): no memory {path!r} in namespace {namespace!r}",
            NotFound(path),
        )
    return json.dumps(found, ensure_ascii=False)
