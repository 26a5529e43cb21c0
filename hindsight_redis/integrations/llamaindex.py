"""LlamaIndex on hindsight-redis: a memory block for its ``Memory``, and a retriever.

``pip install "hindsight-redis[llamaindex]"``.

* ``HindsightMemoryBlock(client=...)``: a ``BaseMemoryBlock`` of
  ``llama_index.core.memory.Memory``: on each ``get`` it searches the pool
  with the latest messages and hands the hits (long-term facts, from any
  agent of the namespace) to ``Memory``, which puts them into the chat
  history it returns; the messages ``Memory`` flushes out of its short-term
  history are written as ``dialogue`` memories of the session (the filters
  drop the chit-chat), unless ``write=False``.
* ``HindsightRetriever(client=...)``: a ``BaseRetriever`` whose nodes are
  search hits (``NodeWithScore``: the memory's text and id, ``score`` the
  fused score, the other scores and the memory's fields in ``metadata``), for
  query and chat engines.

Both run on a ``MemoryClient`` (its own loop thread), so they serve blocking
code and every event loop alike; the caller closes the client.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.client.sync_client import MemoryClient
from hindsight_redis.core.models import SearchHit, SearchMode
from hindsight_redis.service.model_tools import hit_metadata

SOURCE = "llamaindex"
"""The ``source`` of the memories a block writes."""


def hit_node(hit: SearchHit) -> NodeWithScore:
    """A search hit as a LlamaIndex node: its text and id, ``score`` the fused score."""
    # the id and fused score are the node's own (id_, score)
    metadata = {k: v for k, v in hit_metadata(hit).items() if k not in ("id", "fused")}
    node = TextNode(
        id_=hit.id,
        text=hit.content,
        metadata=metadata,
        # The scores and fields are for the program; the model reads the memory's text.
        excluded_llm_metadata_keys=list(metadata),
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=hit.fused)


def message_text(message: ChatMessage) -> str:
    """The text of a chat message (its text blocks), stripped."""
    return (message.content or "").strip()


class HindsightMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memories of the pool, retrieved by the conversation's latest messages.

    ``context_window``: how many of the latest messages make the query;
    ``top_k``, ``mode`` and ``filters`` (``search``'s keyword arguments) shape
    the search; ``write``: whether messages flushed out of the short-term
    history become memories (of ``Memory``'s session).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="hindsight_memories", description="The block's name.")
    client: MemoryClient = Field(description="The client the block searches and writes with.")
    top_k: int = Field(default=5, description="At most this many memories.")
    mode: SearchMode = Field(default="hybrid", description="hybrid, vector or keyword.")
    filters: dict[str, Any] = Field(default_factory=dict, description="search's filters.")
    context_window: int = Field(default=3, description="Latest messages in the query.")
    write: bool = Field(default=True, description="Write flushed messages as memories.")

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        texts = [message_text(m) for m in (messages or [])[-self.context_window :]]
        query = "\n".join(t for t in texts if t)
        if not query:
            return ""

        async def search(client: AsyncMemoryClient) -> list[SearchHit]:
            return await client.search(query, top_k=self.top_k, mode=self.mode, **self.filters)

        hits = await self.client.acall(search)
        return "\n".join(f"- {h.content}" for h in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        if not self.write:
            return

        async def write(client: AsyncMemoryClient) -> None:
            context = None
            for message in messages:
                text = message_text(message)
                if not text or message.role not in (MessageRole.USER, MessageRole.ASSISTANT):
                    continue
                session = message.additional_kwargs.get("session_id")
                await client.write(
                    text,
                    session_id=str(session) if session else None,
                    task_type="dialogue",
                    source=SOURCE,
                    context=context,
                )
                context = text

        await self.client.acall(write)


class HindsightRetriever(BaseRetriever):
    """Hybrid search of the memory pool as a LlamaIndex retriever.

    ``top_k`` hits of ``mode``; ``filters`` are ``search``'s keyword arguments
    (``agent_id``, ``session_id``, ``task_type``, ``tags``, ``since``, ``until``,
    ``max_tokens``, ...).
    """

    def __init__(
        self,
        client: MemoryClient,
        *,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.top_k = top_k
        self.mode: SearchMode = mode
        self.filters = dict(filters or {})

    async def _hits(self, client: AsyncMemoryClient, query: str) -> list[SearchHit]:
        return await client.search(query, top_k=self.top_k, mode=self.mode, **self.filters)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.client.call(lambda c: self._hits(c, query_bundle.query_str))
        return [hit_node(h) for h in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = await self.client.acall(lambda c: self._hits(c, query_bundle.query_str))
        return [hit_node(h) for h in hits]
