"""``AsyncMemoryClient``: what agents call to write, search and manage memories.

Writes are validated here (``models.build_event``), encoded as versioned
msgpack events and appended to the namespace's stream (``writer``); workers
do everything else. Searches run through a ``Searcher`` opened on first use;
the operators' reads live in ``admin``. The blocking twin is
``sync_client.MemoryClient``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from hindsight_redis import admin, scripts
from hindsight_redis.admin import DeadLetter
from hindsight_redis.codec import decode_outcome
from hindsight_redis.cold import (
    ExportReport,
    ImportReport,
    Progress,
    PurgeReport,
    export_memories,
    import_memories,
    purge_exported,
)
from hindsight_redis.connection import open_redis, require_search, resolve
from hindsight_redis.documents import RECORD_FIELDS, record_from_fields, record_from_outcome
from hindsight_redis.errors import (
    EmbeddingMismatch,
    InvalidArgument,
    InvalidMemory,
    MemoryProtected,
    NotFound,
    RedisUnavailable,
    redis_errors,
)
from hindsight_redis.keys import Keys
from hindsight_redis.lifecycle import SweepReport, archive_memory, sweep
from hindsight_redis.models import (
    MemoryEvent,
    MemoryRecord,
    SearchHit,
    SearchMode,
    Visibility,
    WriteReceipt,
    build_event,
    wait_timeout_s,
)
from hindsight_redis.query import search_filters
from hindsight_redis.retention import RetentionPolicy
from hindsight_redis.searcher import Searcher
from hindsight_redis.server.profiles import get_profile
from hindsight_redis.settings import Settings
from hindsight_redis.writer import StreamWriter


class AsyncMemoryClient:
    """Write, search and manage memories of one namespace (asyncio).

    Use as ``async with AsyncMemoryClient(settings) as client: ...``, or call
    ``connect()`` / ``aclose()`` yourself. With no ``redis_url`` the embedded
    server is started on first use. Building a client does no I/O.
    """

    def __init__(self, settings: Settings | None = None, *, redis: Redis | None = None) -> None:
        self.settings = settings or Settings()
        self.keys = Keys(self.settings.key_prefix, self.settings.namespace)
        self.profile = get_profile(self.settings.profile)  # until connect() knows the server
        self._redis = redis
        self._owns_redis = redis is None
        self._searcher: Searcher | None = None
        self._search_checked = False
        self._writer = StreamWriter(self.settings, self.keys)

    async def __aenter__(self) -> AsyncMemoryClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def connect(self) -> Redis:
        """Open the connection (starting the embedded server if needed).

        On the embedded server, ``profile`` becomes the one the server runs
        with, unless one is configured explicitly.
        """
        if self._redis is None:
            target = await asyncio.to_thread(resolve, self.settings)
            self.profile = target.profile
            self._redis = await open_redis(target.url)
        return self._redis

    async def aclose(self) -> None:
        """Close the connection this client opened."""
        if self._redis is not None and self._owns_redis:
            await self._redis.aclose()
            self._redis = None
            self._searcher = None

    @property
    def redis(self) -> Redis:
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

    async def write(
        self,
        content: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        task_type: str | None = None,
        source: str | None = None,
        tags: Sequence[str] = (),
        protected: bool = False,
        visibility: Visibility = "shared",
        importance: float | None = None,
        half_life_days: float | None = None,
        idempotency_key: str | None = None,
        wait: bool = False,
        timeout_s: float | None = None,
    ) -> WriteReceipt:
        """Accept one memory; returns at once unless ``wait=True``.

        ``importance`` (0..1) is a hint that nudges the write score;
        ``half_life_days`` sets how fast the memory's retention decays
        (default: its task type's, else ``Settings.half_life_days``);
        ``visibility="private"`` keeps the memory to ``agent_id``; an
        ``idempotency_key`` makes a retried write a no-op. With ``wait=True``
        the receipt comes once the memory is searchable (or says why it was
        dropped), within ``timeout_s`` (default ``write_wait_timeout_s``; 0
        looks once).
        """
        fields = {
            "content": content, "agent_id": agent_id, "session_id": session_id,
            "task_type": task_type, "source": source, "tags": tags, "protected": protected,
            "visibility": visibility, "importance": importance, "half_life_days": half_life_days,
            "idempotency_key": idempotency_key, "wait": wait, "timeout_s": timeout_s,
        }  # fmt: skip
        event = self._event(fields)
        redis = self._redis or await self.connect()
        if wait:
            await self._require_search(redis)
        if idempotency_key is None:
            receipt = await self._writer.append_one(redis, event)
        else:
            receipt = (await self._writer.append(redis, [event], [True]))[0]
        waits = {0: wait_timeout_s(fields, self.settings.write_wait_timeout_s)} if wait else {}
        return (await self._settle(redis, [receipt], waits))[0]

    async def write_many(self, items: Sequence[Mapping[str, Any]]) -> list[WriteReceipt]:
        """Accept a batch in one round trip; every item is validated first.

        Each item is a dict of the keyword arguments of ``write`` (with
        ``content``). The batch is accepted whole or not at all.
        """
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
        default_s = self.settings.write_wait_timeout_s
        waits = {
            n: wait_timeout_s(item, default_s) for n, item in enumerate(items) if item.get("wait")
        }
        redis = self._redis or await self.connect()
        if waits:
            await self._require_search(redis)
        keyed = [item.get("idempotency_key") is not None for item in items]
        receipts = await self._writer.append(redis, events, keyed)
        return await self._settle(redis, receipts, waits)

    async def _require_search(self, redis: Redis) -> None:
        """Before a ``wait=True`` write: without the search module it could only time out."""
        if not self._search_checked:
            await require_search(redis, "wait for the write")
            self._search_checked = True

    async def _settle(
        self, redis: Redis, receipts: list[WriteReceipt], waits: Mapping[int, float]
    ) -> list[WriteReceipt]:
        """After the append: the AOF fsync (durable profile), then the awaited outcomes."""
        if self.profile.wait_aof:
            await self._writer.wait_aof(redis)
        for n, timeout_s in waits.items():
            receipts[n] = await self._writer.wait_outcome(redis, receipts[n], timeout_s)
        return receipts

    # -- search ---------------------------------------------------------------

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
        """Hybrid (vector + keyword), vector or keyword search with metadata filters.

        ``tags``: all must be present; ``since``/``until``: unix seconds of
        ``created_at``. Bad arguments raise ``InvalidQuery``.
        """
        filters = search_filters(
            agent_id=agent_id,
            session_id=session_id,
            task_type=task_type,
            tags=tags,
            since=since,
            until=until,
            include_archived=include_archived,
        )
        for attempt in (1, 2):
            searcher = self._searcher or await self._open_searcher()
            try:
                return await searcher.search(query, top_k=top_k, mode=mode, filters=filters)
            except EmbeddingMismatch:
                # A reindex moved the index under this client: open it again once.
                # If this client's embedder is not the new one, opening says so.
                self._searcher = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _open_searcher(self) -> Searcher:
        self._searcher = await Searcher.open(await self.connect(), self.keys, self.settings)
        return self._searcher

    # -- one memory -------------------------------------------------------------

    async def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory with this id (active, archived, merged or dropped), or None."""
        _check_id(memory_id)
        redis = await self.connect()
        with redis_errors("read the memory"):
            values = await redis.hmget(self.keys.doc(memory_id), list(RECORD_FIELDS))
            if any(v is not None for v in values):
                return record_from_fields(memory_id, dict(zip(RECORD_FIELDS, values, strict=True)))
            raw = await redis.get(self.keys.outcome(memory_id))
        if raw is None:
            return None
        return record_from_outcome(memory_id, self.settings.namespace, decode_outcome(raw))

    async def _set_fields(self, memory_id: str, **fields: str) -> MemoryRecord:
        _check_id(memory_id)
        redis = await self.connect()
        pairs = [x for pair in fields.items() for x in pair]
        with redis_errors("update the memory"):
            updated = await scripts.update_existing(
                redis, memory=self.keys.doc(memory_id), fields=pairs
            )
        if not updated:
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")
        record = await self.get(memory_id)
        assert record is not None
        return record

    async def forget(self, memory_id: str, *, force: bool = False) -> MemoryRecord:
        """Archive a memory: it leaves search results but can be restored.

        A protected memory raises ``MemoryProtected`` unless ``force=True``.
        """
        _check_id(memory_id)
        if not isinstance(force, bool):
            raise InvalidArgument("force must be true or false")
        code = await archive_memory(await self.connect(), self.keys, memory_id, force=force)
        if code == 0:
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")
        if code < 0:
            raise MemoryProtected(
                f"memory {memory_id!r} is protected; forget it with force=True "
                "(CLI --force, MCP force) or lift the protection first"
            )
        record = await self.get(memory_id)
        assert record is not None
        return record

    async def restore(self, memory_id: str) -> MemoryRecord:
        """Bring an archived memory back into search results."""
        return await self._set_fields(memory_id, status="active", archived_at="", archive_reason="")

    async def protect(self, memory_id: str, protected: bool = True) -> MemoryRecord:
        """Mark a memory as protected from retention sweeps (or lift the mark)."""
        return await self._set_fields(memory_id, protected="1" if protected else "0")

    # -- retention --------------------------------------------------------------

    async def sweep(
        self,
        *,
        dry_run: bool = False,
        threshold: float | None = None,
        max_active: int | None = None,
        batch: int | None = None,
        show: int = 20,
    ) -> SweepReport:
        """Archive the active memories with the lowest retention scores.

        Those under ``threshold`` and/or the lowest beyond ``max_active``
        (defaults: ``sweep_threshold`` and ``sweep_max_active``, when neither
        is given); never a protected one. ``dry_run`` changes nothing and
        reports what would be archived; ``show`` victims are listed with their
        scores (0: all). ``SweepBusy`` when another sweep of the namespace runs.
        """
        if threshold is None and max_active is None:
            threshold, max_active = self.settings.sweep_threshold, self.settings.sweep_max_active
        return await sweep(
            await self.connect(),
            self.keys,
            RetentionPolicy.from_settings(self.settings),
            threshold=threshold,
            max_active=max_active,
            dry_run=dry_run,
            batch=self.settings.sweep_batch if batch is None else batch,
            lease_s=self.settings.sweep_lease_s,
            show=show,
            redis_share=self.settings.sweep_redis_share,
        )

    async def export(
        self, path: str | Path, *, status: str = "archived", progress: Progress | None = None
    ) -> ExportReport:
        """Write the memories of ``status`` (archived, active, all) to a ``.jsonl.gz`` file.

        Every field and both vectors; a header line names the namespace and
        models. ``progress(done, total)`` is called as it goes.
        """
        return await export_memories(
            await self.connect(), self.keys, Path(path), status=status, progress=progress
        )

    async def purge_exported(
        self, path: str | Path, *, progress: Progress | None = None
    ) -> PurgeReport:
        """Delete the archived memories that are in an export file and unchanged since."""
        return await purge_exported(await self.connect(), self.keys, Path(path), progress=progress)

    async def import_file(
        self, path: str | Path, *, progress: Progress | None = None
    ) -> ImportReport:
        """Restore an export file into this namespace; memories already present are kept."""
        report = await import_memories(
            await self.connect(), self.keys, self.settings, Path(path), progress=progress
        )
        self._searcher = None  # the import may have created the index
        return report

    # -- the operators' side ------------------------------------------------------

    async def stats(self) -> dict[str, Any]:
        """Counters and stream state; see ``admin.collect_stats``."""
        return await admin.collect_stats(
            await self.connect(), self.keys, live_within_ms=self.settings.claim_idle_ms
        )

    async def dead_letters(self, count: int = 100) -> list[DeadLetter]:
        """The oldest dead-lettered writes, with their errors."""
        return await admin.list_dead_letters(await self.connect(), self.keys, count)

    async def replay_dead_letters(self, ids: list[str] | None = None) -> list[str]:
        """Put dead letters (all, or those ids) back on the stream; their new stream ids."""
        return await admin.replay_dead_letters(await self.connect(), self.keys, ids)

    async def conflicts(self, limit: int = 100) -> list[MemoryRecord]:
        """Memories flagged for review because they contradict another (newest first)."""
        return await admin.list_conflicts(await self.connect(), self.keys, limit=limit)

    async def reindex(self, embedder: str) -> dict[str, Any]:
        """Rebuild the index under another embedder (``"local"``, ``"litellm:<model>"``...).

        Searches keep being served by the old index until the new one is
        complete; then the alias moves. Restart workers with the new embedder.
        The new index gets the configured ``contextual_embedder``'s field (its
        vectors are kept when the model is unchanged, else recomputed by the
        workers' refiners).
        """
        from hindsight_redis.index import MemoryIndex
        from hindsight_redis.providers.embedders import (
            contextual_from_settings,
            embedder_from_settings,
        )

        new_settings = self.settings.model_copy(update={"embedder": embedder})
        info = await MemoryIndex(await self.connect(), self.keys, new_settings).reindex(
            embedder_from_settings(new_settings), contextual_from_settings(new_settings)
        )
        self._searcher = None  # the next search re-opens against the new index
        return {
            "index": info.name,
            "generation": info.generation,
            "model": info.model_id,
            "dims": info.dims,
            "contextual_model": info.context_model or None,
        }


def _check_id(memory_id: str) -> None:
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 128:
        raise InvalidMemory("memory id must be a non-empty string of at most 128 characters")
    if any(c in memory_id for c in "{}:* \n"):
        raise InvalidMemory(f"invalid memory id {memory_id!r}")
