"""LangChain on hindsight-redis: a retriever, and the memory tools as ``StructuredTool``s.

``pip install "hindsight-redis[langchain]"``.

* ``HindsightRetriever(settings=...)``: a ``BaseRetriever`` whose documents are
  search hits: ``page_content`` is the memory, ``id`` its id, ``metadata`` its
  scores (``fused``, ``vector``, ``keyword``, ``contextual``, ``bm25``), writer,
  session, task type, tags, time and open ``conflicts_with``.
* ``memory_tools(settings)``: the tools of ``hindsight_redis.service.tools.TOOLS`` (the
  MCP server's: same names, descriptions and argument schemas), acting as the
  settings' ``agent_id``; library errors come back to the model as tool
  errors that say what was wrong and whether a retry can help.

Both run on a ``MemoryClient`` (its own loop thread), so they serve blocking
code and any event loop alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import ConfigDict, Field, PrivateAttr

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.client.sync_client import MemoryClient
from hindsight_redis.core.models import SearchHit, SearchMode
from hindsight_redis.service.model_tools import (
    ToolCallError,
    call_tool,
    hit_metadata,
    model_principal,
    offered_tools,
)
from hindsight_redis.service.tokens import Principal
from hindsight_redis.service.tools import ToolSpec
from hindsight_redis.settings import Settings


def hit_document(hit: SearchHit) -> Document:
    """A search hit as a LangChain ``Document`` (scores and ids in ``metadata``)."""
    return Document(page_content=hit.content, id=hit.id, metadata=hit_metadata(hit))


class HindsightRetriever(BaseRetriever):
    """Hybrid search of the memory pool as a LangChain retriever.

    ``top_k`` hits of ``mode``; ``filters`` are ``search``'s keyword arguments
    (``agent_id``, ``session_id``, ``task_type``, ``tags``, ``since``, ``until``,
    ``include_archived``, ``max_tokens``, ``as_agent``). A ``client`` may be
    shared; otherwise one is opened on ``settings`` on first use (``close()``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: Settings | None = None
    client: MemoryClient | None = None
    top_k: int = 5
    mode: SearchMode = "hybrid"
    filters: dict[str, Any] = Field(default_factory=dict)
    _opened: MemoryClient | None = PrivateAttr(default=None)

    def _memory(self) -> MemoryClient:
        if self.client is not None:
            return self.client
        if self._opened is None:
            self._opened = MemoryClient(self.settings)
        return self._opened

    def close(self) -> None:
        """Close the client this retriever opened."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None

    async def _hits(self, client: AsyncMemoryClient, query: str) -> list[SearchHit]:
        return await client.search(query, top_k=self.top_k, mode=self.mode, **self.filters)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self._memory().call(lambda c: self._hits(c, query))
        return [hit_document(h) for h in hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = await self._memory().acall(lambda c: self._hits(c, query))
        return [hit_document(h) for h in hits]


def _tool(spec: ToolSpec, memory: MemoryClient, principal: Principal) -> StructuredTool:
    async def run_on(client: AsyncMemoryClient, arguments: dict[str, Any]) -> Any:
        try:
            return await call_tool(spec, client, principal, arguments)
        except ToolCallError as e:
            raise ToolException(str(e)) from e

    def run(**arguments: Any) -> Any:
        return memory.call(lambda c: run_on(c, arguments))

    async def arun(**arguments: Any) -> Any:
        return await memory.acall(lambda c: run_on(c, arguments))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=spec.name,
        description=spec.description,
        args_schema=spec.arguments,
        handle_tool_error=True,
    )


def memory_tools(
    settings: Settings | None = None,
    *,
    client: MemoryClient | None = None,
    names: Sequence[str] | None = None,
) -> list[BaseTool]:
    """The memory tools (those of ``service.tools.TOOLS`` a write token may call, or those
    ``names``) as LangChain tools: never the admin ones (the review of held writes).

    They act as ``settings.agent_id`` (a model's ``agent_id`` argument cannot
    name another writer); ``client`` may be shared, else one is opened on
    ``settings`` and lives as long as the tools.
    """
    memory = client or MemoryClient(settings)
    principal = model_principal(memory.settings.namespace, memory.settings.agent_id)
    return [_tool(spec, memory, principal) for spec in offered_tools(principal, names)]
