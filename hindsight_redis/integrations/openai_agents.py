"""The OpenAI Agents SDK on hindsight-redis: a ``Session``, and the memory tools.

``pip install "hindsight-redis[openai-agents]"``.

* ``HindsightSession(session_id, settings)``: the SDK's session protocol
  (``get_items``, ``add_items``, ``pop_item``, ``clear_session``) over a
  conversation of the namespace (``client.conversation``): the items are kept
  in Redis, in order and exactly as the SDK gave them, so a conversation goes
  on across runs and processes. They are not memories: with
  ``remember=True`` each user and assistant message is also written as a
  ``dialogue`` memory of the session (the filters drop the chit-chat), so
  ``memory_search`` finds it later from any adapter.
* ``memory_tools(settings)``: the tools of ``service.tools.TOOLS`` a model may
  call (the MCP server's names, descriptions and argument schemas) as
  ``FunctionTool``s, acting as the settings' ``agent_id``; a failure comes
  back to the model as text saying what was wrong and whether a retry helps.

Both run on a ``MemoryClient`` (its own loop thread), so they serve every
event loop of the process (``Runner.run_sync`` makes one per run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents import FunctionTool, SessionSettings
from agents.items import TResponseInputItem
from agents.tool_context import ToolContext

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.client.conversation import Conversation
from hindsight_redis.client.sync_client import MemoryClient
from hindsight_redis.errors import InvalidArgument
from hindsight_redis.service.model_tools import (
    ToolCallError,
    call_tool,
    model_principal,
    offered_tools,
)
from hindsight_redis.service.tokens import Principal
from hindsight_redis.service.tools import ToolSpec
from hindsight_redis.settings import Settings

SOURCE = "openai-agents"
"""The ``source`` of the memories a session writes (``remember=True``)."""


def message_text(item: Mapping[str, Any]) -> str | None:
    """The text of a user or assistant message item (``None`` for tool calls and the rest)."""
    if item.get("role") not in ("user", "assistant") or item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if p).strip() or None
    return None


class HindsightSession:
    """A conversation of the Agents SDK kept in the memory pool's namespace.

    ``session_settings.limit`` (or ``get_items(limit)``) bounds what a run
    replays; ``ttl_s`` expires the conversation that long after its last
    addition; ``client`` may be shared, else one is opened on ``settings``
    (``close()``).
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        settings: Settings | None = None,
        *,
        client: MemoryClient | None = None,
        remember: bool = False,
        ttl_s: int | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.remember = remember
        if not session_id or (ttl_s is not None and ttl_s <= 0):
            raise InvalidArgument(f"a session needs an id and a positive ttl_s: {session_id!r}")
        self._ttl_s = ttl_s
        self._owned = client is None
        self._memory = client or MemoryClient(settings)

    def _conversation(self, client: AsyncMemoryClient) -> Conversation:
        return Conversation(client, self.session_id, ttl_s=self._ttl_s)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation's items, oldest first (the latest ``limit``, if given or set)."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        items: list[TResponseInputItem] = await self._memory.acall(
            lambda c: self._conversation(c).items(limit)
        )
        return items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append items; with ``remember``, write their messages as memories too."""
        await self._memory.acall(lambda c: self._add(c, items))

    async def _add(self, client: AsyncMemoryClient, items: Sequence[Any]) -> None:
        conversation = self._conversation(client)
        previous = [message_text(i) for i in await conversation.items(1)]
        await conversation.add(items)
        if not self.remember:
            return
        context = previous[0] if previous else None
        for item in items:
            text = message_text(item)
            if text is None:
                continue
            await client.write(
                text,
                session_id=self.session_id,
                task_type="dialogue",
                source=SOURCE,
                context=context,
            )
            context = text

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (``None`` when the conversation is empty)."""
        item: TResponseInputItem | None = await self._memory.acall(
            lambda c: self._conversation(c).pop()
        )
        return item

    async def clear_session(self) -> None:
        """Remove every item of the conversation (its memories stay)."""
        await self._memory.acall(lambda c: self._conversation(c).clear())

    def close(self) -> None:
        """Close the client this session opened."""
        if self._owned:
            self._memory.close()


def _tool(spec: ToolSpec, memory: MemoryClient, principal: Principal) -> FunctionTool:
    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
            if not isinstance(parsed, dict):
                raise ToolCallError(
                    "InvalidArgument (retryable): arguments must be a JSON object", retryable=True
                )
            result = await memory.acall(lambda c: call_tool(spec, c, principal, parsed))
        except json.JSONDecodeError as e:
            return f"InvalidArgument (retryable): arguments are not JSON: {e}"
        except ToolCallError as e:
            return str(e)
        return json.dumps(result, ensure_ascii=False)

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=spec.arguments.model_json_schema(),
        on_invoke_tool=invoke,
        # The schema has optional fields with defaults: the strict mode would require them all.
        strict_json_schema=False,
    )


def memory_tools(
    settings: Settings | None = None,
    *,
    client: MemoryClient | None = None,
    names: Sequence[str] | None = None,
) -> list[FunctionTool]:
    """The memory tools a model may call (those ``names``, else all but the admin ones)
    as ``FunctionTool``s acting as ``settings.agent_id``; ``client`` may be shared,
    else one is opened on ``settings`` and lives as long as the tools."""
    memory = client or MemoryClient(settings)
    principal = model_principal(memory.settings.namespace, memory.settings.agent_id)
    return [_tool(spec, memory, principal) for spec in offered_tools(principal, names)]
