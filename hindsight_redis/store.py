"""The client agents use: ``AsyncMemoryClient`` (async first) and ``MemoryClient``.

Writes are validated here, encoded as versioned msgpack events and appended
to the namespace's stream by one Lua script (idempotency, backpressure and
``XADD`` in one atomic step). Workers do everything else.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis import scripts
from hindsight_redis.codec import (
    decode_outcome,
    record_from_doc,
)
from hindsight_redis.connection import connect
from hindsight_redis.deadletters import DeadLetter, list_dead_letters, replay_dead_letters
from hindsight_redis.errors import (
    EmbeddingMismatch,
    InvalidMemory,
    NotFound,
    RedisUnavailable,
)
from hindsight_redis.keys import Keys
from hindsight_redis.models import (
    MemoryEvent,
    MemoryRecord,
    SearchFilters,
    SearchHit,
    SearchMode,
    WriteReceipt,
    build_event,
)
from hindsight_redis.server.profiles import get_profile
from hindsight_redis.settings import Settings
from hindsight_redis.stats import collect_stats
from hindsight_redis.writer import StreamWriter

RECORD_FIELDS = (
    "namespace", "content", "status", "agent_id", "session_id", "task_type", "source",
    "sources", "tags", "original", "write_score", "score_reason", "access_count",
    "created_at", "last_accessed_at", "protected", "visibility", "embedding_model",
    "embedding_dims", "conflicts_with",
)  # fmt: skip


class AsyncMemoryClient:
    """Write, search and manage memories of one namespace (asyncio).

    Use as ``async with AsyncMemoryClient(settings) as client: ...``, or call
    ``connect()`` / ``aclose()`` yourself. With no ``redis_url`` the embedded
    server is started on first use.
    """

    def __init__(
        self, settings: Settings | None = None, *, redis: aioredis.Redis | None = None
    ) -> None:
        self.settings = settings or Settings()
        self.keys = Keys(self.settings.key_prefix, self.settings.namespace)
        self.profile = get_profile(self.settings.profile)
        self._redis = redis
        self._owns_redis = redis is None
        self._search_state: Any = None
        self._writer = StreamWriter(self.settings, self.keys)

    async def __aenter__(self) -> AsyncMemoryClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def connect(self) -> aioredis.Redis:
        """Open the connection (starting the embedded server if needed)."""
        if self._redis is None:
            self._redis = await connect(self.settings)
        return self._redis

    async def aclose(self) -> None:
        """Close the connection this client opened."""
        if self._redis is not None and self._owns_redis:
            await self._redis.aclose()
            self._redis = None

    @property
    def redis(self) -> aioredis.Redis:
        """The underlying client; ``connect()`` first."""
        if self._redis is None:
            raise RedisUnavailable("client is not connected: call connect() or use 'async with'")
        return self._redis

    # -- writes ---------------------------------------------------------------

    def _event(self, fields: Mapping[str, Any]) -> MemoryEvent:
        return build_event(
            self.settings.namespace,
            fields,
            max_content_chars=self.settings.max_content_chars,
            max_tags=self.settings.max_tags,
        )

    async def write(self, content: str, **fields: Any) -> WriteReceipt:
        """Accept one memory; returns at once unless ``wait=True``.

        Keyword arguments: agent_id, session_id, task_type, source, tags,
        protected, idempotency_key, importance (0..1 hint), visibility,
        wait (return once searchable or dropped) and timeout (seconds).
        """
        item = {"content": content, **fields}
        event = self._event(item)
        redis = self._redis or await self.connect()
        writer = self._writer
        if item.get("idempotency_key") is None:
            receipt = await writer.append_one(redis, event)
        else:
            receipt = (await writer.append(redis, [event], [item]))[0]
        if self.profile.wait_aof:
            await writer.wait_aof(redis)
        if item.get("wait"):
            timeout_s = float(item.get("timeout") or self.settings.write_wait_timeout_s)
            receipt = await writer.wait_outcome(redis, receipt, timeout_s)
        return receipt

    async def write_many(self, items: Sequence[Mapping[str, Any]]) -> list[WriteReceipt]:
        """Accept a batch in one round trip; every item is validated first."""
        if isinstance(items, Mapping | str):
            raise InvalidMemory("write_many takes a list of dicts")
        events = []
        for n, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise InvalidMemory(f"item {n} is not a dict")
            try:
                events.append(self._event(item))
            except InvalidMemory as e:
                raise InvalidMemory(f"item {n}: {e}") from None
        if not events:
            return []
        redis = await self.connect()
        receipts = await self._writer.append(redis, events, items)
        if self.profile.wait_aof:
            await self._writer.wait_aof(redis)
        waits = [
            (n, float(item.get("timeout") or self.settings.write_wait_timeout_s))
            for n, item in enumerate(items)
            if item.get("wait")
        ]
        for n, timeout_s in waits:
            receipts[n] = await self._writer.wait_outcome(redis, receipts[n], timeout_s)
        return receipts

    # -- reads and management --------------------------------------------------

    async def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory with this id (active, archived, merged or dropped), or None."""
        _check_id(memory_id)
        redis = await self.connect()
        values = await redis.hmget(self.keys.doc(memory_id), list(RECORD_FIELDS))
        if any(v is not None for v in values):
            return record_from_doc(memory_id, dict(zip(RECORD_FIELDS, values, strict=True)))
        raw = await redis.get(self.keys.outcome(memory_id))
        if raw is None:
            return None
        outcome = decode_outcome(raw)
        status = outcome.get("status")
        if status == "merged":
            return MemoryRecord(
                id=memory_id,
                namespace=self.settings.namespace,
                content=str(outcome.get("content", "")),
                status="merged",
                merged_into=outcome.get("merged_into"),
                reason="near-duplicate of an existing memory",
            )
        if status == "dropped":
            return MemoryRecord(
                id=memory_id,
                namespace=self.settings.namespace,
                content=str(outcome.get("content", "")),
                status="dropped",
                agent_id=str(outcome.get("agent_id", "")),
                source=str(outcome.get("source", "")),
                reason=_reason(outcome),
            )
        return None

    async def _set_fields(self, memory_id: str, **fields: str) -> MemoryRecord:
        _check_id(memory_id)
        redis = await self.connect()
        key = self.keys.doc(memory_id)
        script = redis.register_script(scripts.UPDATE_EXISTING)
        args = [x for pair in fields.items() for x in pair]
        if not await script(keys=[key], args=args):
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")
        record = await self.get(memory_id)
        assert record is not None
        return record

    async def forget(self, memory_id: str) -> MemoryRecord:
        """Archive a memory: it leaves search results but can be restored."""
        return await self._set_fields(
            memory_id, status="archived", archived_at=f"{time.time():.6f}"
        )

    async def restore(self, memory_id: str) -> MemoryRecord:
        """Bring an archived memory back into search results."""
        return await self._set_fields(memory_id, status="active", archived_at="")

    async def protect(self, memory_id: str, protected: bool = True) -> MemoryRecord:
        """Mark a memory as protected from retention sweeps (or lift the mark)."""
        return await self._set_fields(memory_id, protected="1" if protected else "0")

    async def stats(self) -> dict[str, Any]:
        """Counters and stream state; see ``hindsight_redis.stats.collect_stats``."""
        return await collect_stats(await self.connect(), self.keys)

    async def dead_letters(self, count: int = 100) -> list[DeadLetter]:
        """The oldest dead-lettered writes, with their errors."""
        return await list_dead_letters(await self.connect(), self.keys, count)

    async def replay_dead_letters(self, ids: list[str] | None = None) -> list[str]:
        """Put dead letters (all, or those ids) back on the stream."""
        return await replay_dead_letters(await self.connect(), self.keys, ids)

    async def reindex(self, embedder: str) -> dict[str, Any]:
        """Rebuild the index under another embedder (``"local"``, ``"litellm:<model>"``...).

        Searches keep being served by the old index until the new one is
        complete; then the alias moves. Restart workers with the new embedder.
        The new index gets the configured ``contextual_embedder``'s field (its
        vectors are kept when the model is unchanged, else recomputed by the
        workers' refiners).
        """
        from hindsight_redis.index import MemoryIndex
        from hindsight_redis.pipeline.assembly import (
            contextual_from_settings,
            embedder_from_settings,
        )

        new_settings = self.settings.model_copy(update={"embedder": embedder})
        info = await MemoryIndex(await self.connect(), self.keys, new_settings).reindex(
            embedder_from_settings(new_settings), contextual_from_settings(new_settings)
        )
        self._search_state = None  # the next search re-opens against the new index
        return {
            "index": info.name,
            "generation": info.generation,
            "model": info.model_id,
            "dims": info.dims,
            "contextual_model": info.context_model or None,
        }

    async def conflicts(self, limit: int = 100) -> list[MemoryRecord]:
        """Memories flagged for review because they contradict another (newest first)."""
        from hindsight_redis.search import list_conflicts

        return await list_conflicts(await self.connect(), self.keys, limit=limit)

    async def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
        task_type: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        since: float | None = None,
        until: float | None = None,
        include_archived: bool = False,
    ) -> list[SearchHit]:
        """Hybrid (vector + keyword), vector or keyword search with metadata filters."""
        from hindsight_redis.searching import SearchService

        if isinstance(tags, str):
            raise InvalidMemory("tags must be a list of strings")
        filters = SearchFilters(
            agent_id=agent_id,
            session_id=session_id,
            task_type=task_type,
            tags=None if tags is None else tuple(tags),
            since=since,
            until=until,
            include_archived=include_archived,
        )
        for attempt in (1, 2):
            if self._search_state is None:
                self._search_state = await SearchService.open(
                    await self.connect(), self.keys, self.settings
                )
            service: SearchService = self._search_state
            try:
                return await service.search(query, top_k=top_k, mode=mode, filters=filters)
            except EmbeddingMismatch:
                # A reindex moved the index under this client: open it again once.
                # If this client's embedder is not the new one, open() says so.
                self._search_state = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _check_id(memory_id: str) -> None:
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 128:
        raise InvalidMemory("memory id must be a non-empty string of at most 128 characters")
    if any(c in memory_id for c in "{}:* \n"):
        raise InvalidMemory(f"invalid memory id {memory_id!r}")


def _reason(outcome: Mapping[str, Any]) -> str:
    reason = str(outcome.get("reason", ""))
    detail = outcome.get("detail")
    return f"{reason} ({detail})" if detail else reason
