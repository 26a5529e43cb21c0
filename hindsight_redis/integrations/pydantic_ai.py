"""PydanticAI on hindsight-redis: the memory tools, and the dependency they run on.

``pip install "hindsight-redis[pydantic-ai]"``.

* ``HindsightDeps(client)``: the dependency type of an agent that has the
  memory tools (``Agent(..., deps_type=HindsightDeps)``); a run's ``deps``
  carry the ``MemoryClient`` its tools use, so one agent serves many users,
  each run with its own client (its namespace and ``agent_id``). Subclass it
  to carry more.
* ``memory_tools(names=None)``: the tools of ``service.tools.TOOLS`` a model
  may call (the MCP server's names, descriptions and argument schemas) as
  ``Tool``s, acting as the deps' ``agent_id`` with a write scope. A call with
  bad arguments asks the model to retry (``ModelRetry``); any other failure is
  reported to it as final (``ToolFailed``), saying what was wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry, RunContext, Tool
from pydantic_ai.exceptions import ToolFailed

from hindsight_redis.client.sync_client import MemoryClient
from hindsight_redis.service.model_tools import (
    ToolCallError,
    call_tool,
    model_principal,
    offered_tools,
)
from hindsight_redis.service.tools import JSON, ToolSpec


@dataclass
class HindsightDeps:
    """What the memory tools of a run use: a ``MemoryClient`` (its settings say who acts)."""

    client: MemoryClient


def _tool(spec: ToolSpec) -> Tool[HindsightDeps]:
    async def run(ctx: RunContext[HindsightDeps], **arguments: Any) -> JSON:
        memory = ctx.deps.client
        principal = model_principal(memory.settings.namespace, memory.settings.agent_id)
        try:
            return await memory.acall(lambda c: call_tool(spec, c, principal, arguments))
        except ToolCallError as e:
            if e.retryable:
                raise ModelRetry(str(e)) from e
            raise ToolFailed(str(e)) from e

    return Tool.from_schema(
        run,
        name=spec.name,
        description=spec.description,
        json_schema=spec.arguments.model_json_schema(),
        takes_ctx=True,
    )


def memory_tools(names: Sequence[str] | None = None) -> list[Tool[HindsightDeps]]:
    """The memory tools a model may call (those ``names``, else all but the admin ones),
    for an agent whose ``deps_type`` is ``HindsightDeps``."""
    # Which tools a model is offered does not depend on who it acts as: any write principal.
    specs = offered_tools(model_principal("", ""), names)
    return [_tool(spec) for spec in specs]
