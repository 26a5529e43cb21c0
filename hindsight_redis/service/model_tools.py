"""The memory tools as a framework adapter hands them to a model in process.

What every in-process adapter (OpenAI Agents, PydanticAI, ...) needs around
``tools.TOOLS``, so they choose and run the tools alike: a model acts as
one agent with a write scope (never an admin: the review of held writes and
erasure are for people), its arguments are checked against the spec's schema,
and a failure comes back as ``ToolCallError`` whose message says what was
wrong and whether a retry can help (the framework shows it to the model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.core.models import SearchHit
from hindsight_redis.errors import HindsightError, InvalidArgument
from hindsight_redis.service.tokens import Principal
from hindsight_redis.service.tools import JSON, TOOLS, ToolSpec


class ToolCallError(Exception):
    """A tool call that failed in a way the model should read (its message); ``retryable``:
    whether the same call, or one with other arguments, may succeed."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


def model_principal(namespace: str, agent_id: str) -> Principal:
    """Who a model's tool calls act as: the agent, with a write scope."""
    return Principal(namespace, agent_id, "write")


def offered_tools(principal: Principal, names: Sequence[str] | None = None) -> list[ToolSpec]:
    """The specs a model may be given (those ``names``, or all its scope allows), in
    ``TOOLS`` order; an unknown or admin name raises ``InvalidArgument``."""
    offered = [s for s in TOOLS if principal.allows(s.scope)]
    unknown = set(names or ()) - {s.name for s in offered}
    if unknown:
        admin = unknown & {s.name for s in TOOLS}
        raise InvalidArgument(
            f"unknown tool(s): {', '.join(sorted(unknown - admin)) or '-'}; "
            f"admin tools never offered to a model: {', '.join(sorted(admin)) or '-'}"
        )
    return [s for s in offered if names is None or s.name in names]


async def call_tool(
    spec: ToolSpec, client: AsyncMemoryClient, principal: Principal, arguments: Mapping[str, Any]
) -> JSON:
    """Run one tool call as ``principal``; its JSON result, or ``ToolCallError``."""
    if not principal.allows(spec.scope):
        raise ToolCallError(
            f"PermissionDenied (not retryable): these tools act with scope "
            f"{principal.scope!r}; {spec.name} needs {spec.scope!r}",
            retryable=False,
        )
    try:
        args = spec.arguments.model_validate(dict(arguments))
    except ValidationError as e:
        raise ToolCallError(
            f"InvalidArgument (retryable with other arguments): {e}", retryable=True
        ) from e
    try:
        return await spec.run(client, principal, args)
    except HindsightError as e:
        hint = "retryable" if e.retryable else "not retryable"
        raise ToolCallError(f"{type(e).__name__} ({hint}): {e}", retryable=e.retryable) from e


def hit_metadata(hit: SearchHit) -> dict[str, Any]:
    """A search hit's scores and fields as a framework's document metadata (JSON values):
    what the LangChain, LlamaIndex and other adapters attach beside the memory's text."""
    return {
        "id": hit.id,
        "fused": hit.fused,
        "vector": hit.vector,
        "keyword": hit.keyword,
        "contextual": hit.contextual,
        "bm25": hit.bm25,
        "source": hit.source,
        "agent_id": hit.agent_id,
        "session_id": hit.session_id,
        "task_type": hit.task_type,
        "tags": list(hit.tags),
        "created_at": hit.created_at,
        "status": hit.status,
        "conflicts_with": list(hit.conflicts_with),
    }
