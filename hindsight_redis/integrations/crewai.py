"""CrewAI on hindsight-redis: a storage backend for its ``Memory``, so a crew shares the pool.

``pip install "hindsight-redis[crewai]"``.

* ``hindsight_memory(client, **memory_options)``: a CrewAI ``Memory`` on the
  pool, for ``Crew(memory=...)`` or ``Agent(memory=...)``: what the crew's
  agents remember is written to the client's namespace (``source`` ``crewai``),
  and what they recall is found by hindsight's hybrid search there, among the
  memories of every adapter and agent of the namespace.
* ``HindsightStorage(client)``: the ``StorageBackend`` under it (``save``,
  ``search``, ``delete``, ``update``, ``reset`` and the listings, sync and
  async). A record's scope, categories, importance and privacy are kept as
  tags (``crewai:scope:/crew/x``, one per level of the path;
  ``crewai:category:c``; ``crewai:importance:0.7``; ``crewai:private``), its
  ``source`` as the memory's ``session_id``; its ``metadata`` (what CrewAI's
  LLM extracted: entities, dates, topics) is not kept.

CrewAI hands a storage vectors it computed, not the text. ``text_embedder``
(the ``Memory``'s embedder) makes vectors that carry their text, and the
storage searches with that text: hindsight embeds it with the namespace's
own models, keywords included. A vector from another embedder is refused
(``InvalidArgument``), so build the ``Memory`` with ``hindsight_memory`` or
``embedder=text_embedder``.

A crew reads the whole pool but changes only what it wrote: ``reset``,
``delete`` and ``update`` act on CrewAI's memories (erased through the
client's erasure API, every copy), never on another adapter's. A search in a
scope finds the CrewAI memories of that scope and, unless
``pool_wide=False``, the other adapters' memories, which have no scope.
Listings (``list_scopes``, ``count``, ...) read every CrewAI memory of the
scope, one by one.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from crewai.memory.types import MemoryRecord, ScopeInfo
from crewai.memory.unified_memory import Memory

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.client.sync_client import MemoryClient
from hindsight_redis.core.models import MemoryRecord as Stored
from hindsight_redis.core.models import SearchHit, SearchMode
from hindsight_redis.core.requests import WriteItem
from hindsight_redis.errors import InvalidArgument

SOURCE = "crewai"
"""The ``source`` of the memories a ``HindsightStorage`` writes."""
SCOPE = "crewai:scope:"
CATEGORY = "crewai:category:"
IMPORTANCE = "crewai:importance:"
PRIVATE = "crewai:private"
ROOT_TAG = SCOPE + "/"
"""Carried by every memory a CrewAI storage writes: ``reset()`` of the root erases these."""

# A text vector: _HEAD components from the text's digest, then its UTF-8 bytes scaled down.
_HEAD = 16
_BYTE_SCALE = 1e-6
_MAX_TAGS = 32  # settings.limits.max_tags' default; a record's categories are cut to fit
_MAX_LISTED = 10_000


def _head(data: bytes) -> list[float]:
    digest = hashlib.blake2b(data, digest_size=2 * _HEAD).digest()
    raw = [v - 32768.0 for v in struct.unpack(f"<{_HEAD}H", digest)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


def text_vector(text: str) -> list[float]:
    """A vector that carries its text (``vector_text`` reads it back).

    Its head is a unit vector drawn from the text's digest: two texts are
    near-orthogonal unless equal, so CrewAI's duplicate and similarity checks
    on vectors only see exact repeats (the workers find near-duplicates and
    contradictions themselves). Its tail is the text's UTF-8 bytes, scaled too
    small to move a cosine and exact to read back.
    """
    data = text.encode()
    return [*_head(data), *(b * _BYTE_SCALE for b in data)]


def vector_text(vector: Sequence[float]) -> str:
    """The text a ``text_vector`` carries; ``InvalidArgument`` for any other vector."""
    if len(vector) > _HEAD:
        try:
            data = bytes(round(x / _BYTE_SCALE) for x in vector[_HEAD:])
            if _head(data) == [float(x) for x in vector[:_HEAD]]:
                return data.decode()
        except (ValueError, TypeError, OverflowError):
            pass
    raise InvalidArgument(
        "HindsightStorage searches by text: build the Memory with hindsight_memory() "
        "or embedder=text_embedder, not another embedder"
    )


def text_embedder(texts: Sequence[str]) -> list[list[float]]:
    """CrewAI's embedder interface (texts in, vectors out) with ``text_vector``."""
    return [text_vector(t) for t in texts]


def _scope(path: str | None) -> str:
    """A scope path as CrewAI writes it: ``/a/b``, the root ``/``."""
    parts = [p for p in (path or "/").split("/") if p]
    return "/" + "/".join(parts)


def scope_tags(path: str) -> list[str]:
    """One tag per level of a scope, the root's first: a prefix search is a tag filter."""
    parts = [p for p in _scope(path).split("/") if p]
    return [ROOT_TAG] + [SCOPE + "/" + "/".join(parts[: n + 1]) for n in range(len(parts))]


def _clean(text: str) -> str:
    return text.replace("|", "/")  # "|" separates a memory's stored tags


def record_item(record: MemoryRecord) -> WriteItem:
    """The write of a CrewAI record: its text, with its fields as tags."""
    tags = [_clean(t)[:128] for t in scope_tags(record.scope)]
    tags.append(f"{IMPORTANCE}{record.importance:.2f}")
    if record.private:
        tags.append(PRIVATE)
    room = max(_MAX_TAGS - len(tags), 0)
    tags += [_clean(CATEGORY + c)[:128] for c in record.categories if c.strip()][:room]
    key = "\n".join([record.id, record.content, record.source or "", *tags]).encode()
    item: WriteItem = {
        "content": record.content,
        "source": SOURCE,
        "tags": tags,
        "importance": record.importance,
        # A retried save is a no-op: the record's id and fields key its write.
        "idempotency_key": "crewai:" + hashlib.blake2b(key, digest_size=16).hexdigest(),
    }
    if record.source:
        item["session_id"] = record.source
    if record.private:  # hindsight keeps it to the writing agent (the crew's client)
        item["visibility"] = "private"
    return item


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)  # CrewAI's naive UTC


def to_record(
    memory_id: str,
    content: str,
    tags: Iterable[str],
    *,
    created_at: float,
    session_id: str = "",
    agent_id: str = "",
    source: str = "",
) -> MemoryRecord:
    """A memory of the pool as a CrewAI record: its id is the memory's; another
    adapter's memory is at the root scope, with its writer in ``metadata``."""
    tags = list(tags)
    scopes = [t[len(SCOPE) :] for t in tags if t.startswith(SCOPE)]
    importance = [t[len(IMPORTANCE) :] for t in tags if t.startswith(IMPORTANCE)]
    metadata = {k: v for k, v in (("agent_id", agent_id), ("source", source)) if v}
    return MemoryRecord(
        id=memory_id,
        content=content,
        scope=max(scopes, key=len) if scopes else "/",
        categories=[t[len(CATEGORY) :] for t in tags if t.startswith(CATEGORY)],
        metadata=metadata if source != SOURCE else {},
        importance=float(importance[0]) if importance else 0.5,
        created_at=_when(created_at),
        last_accessed=_when(created_at),
        source=session_id or None,
        private=PRIVATE in tags,
    )


def _as_record(memory: SearchHit | Stored) -> MemoryRecord:
    return to_record(
        memory.id,
        memory.content,
        memory.tags,
        created_at=memory.created_at,
        session_id=memory.session_id,
        agent_id=memory.agent_id,
        source=memory.source,
    )


def similarity(hit: SearchHit) -> float:
    """CrewAI's semantic score of a hit: its best cosine (static or contextual vector),
    else (found by keywords alone) its fused score; from 0 to 1.

    A cosine, not the fused score: the fused score is relative (the top hit's is 1),
    and CrewAI reads the score as absolute, to decide whether a new memory repeats an
    old one (consolidation) and whether a recall found enough (or explores further).
    """
    cosines = [s for s in (hit.vector, hit.contextual) if s is not None]
    return min(max(max(cosines) if cosines else hit.fused, 0.0), 1.0)


def _in_scope(record: MemoryRecord, prefix: str) -> bool:
    return prefix == "/" or record.scope == prefix or record.scope.startswith(prefix + "/")


class HindsightStorage:
    """CrewAI's ``StorageBackend`` over a ``MemoryClient`` (the caller closes the client).

    ``mode``: the search's (hybrid, vector or keyword); ``pool_wide``: a
    search in a scope also finds the other adapters' memories (which have no
    scope); ``wait``: a save returns once the workers have indexed it (else at
    once, searchable after the next worker batch).
    """

    def __init__(
        self,
        client: MemoryClient,
        *,
        mode: SearchMode = "hybrid",
        pool_wide: bool = True,
        wait: bool = False,
    ) -> None:
        self.client = client
        self.mode: SearchMode = mode
        self.pool_wide = pool_wide
        self.wait = wait

    # -- writes ---------------------------------------------------------------

    async def _save(self, c: AsyncMemoryClient, records: Sequence[MemoryRecord]) -> None:
        items = [record_item(r) for r in records if r.content.strip()]
        for item in items:
            if self.wait:
                item["wait"] = True
            if not self.client.settings.agent_id:
                # Hindsight keeps a private memory to its writer: with none, it stays
                # shared, and CrewAI's own filter (by the record's source) applies.
                item.pop("visibility", None)
        if items:
            await c.write_many(items)

    def save(self, records: list[MemoryRecord]) -> None:
        """Write the records as memories of the namespace."""
        self.client.call(lambda c: self._save(c, records))

    async def asave(self, records: list[MemoryRecord]) -> None:
        """``save`` from an event loop."""
        await self.client.acall(lambda c: self._save(c, records))

    async def _update(self, c: AsyncMemoryClient, record: MemoryRecord) -> None:
        # A memory's text is fixed: CrewAI's old memory is erased, the record written.
        # Erased first: written first, the new memory could be merged into the old one.
        own = await self._own(c, record.id)
        if own is not None:
            item = record_item(record)
            if own.content == record.content and set(own.tags) == set(item.get("tags") or ()):
                return  # nothing changed
            await c.erase(record.id)
        await self._save(c, [record])

    def update(self, record: MemoryRecord) -> None:
        """Replace a CrewAI memory by the record (another adapter's memory stays)."""
        self.client.call(lambda c: self._update(c, record))

    # -- search ---------------------------------------------------------------

    async def _search(
        self,
        c: AsyncMemoryClient,
        query: str,
        scope_prefix: str | None,
        categories: list[str] | None,
        limit: int,
        min_score: float,
    ) -> list[tuple[MemoryRecord, float]]:
        prefix = _scope(scope_prefix)
        tags = None if self.pool_wide or prefix == "/" else scope_tags(prefix)[-1:]
        # Scope and categories are checked on the hits: ask for more than kept.
        top_k = min(100, max(limit, 1) * 3)
        hits = await c.search(query, top_k=top_k, mode=self.mode, tags=tags)
        found: list[tuple[MemoryRecord, float]] = []
        for hit in hits:
            record = _as_record(hit)
            if ROOT_TAG in hit.tags and not _in_scope(record, prefix):
                continue
            if categories and not set(categories) & set(record.categories):
                continue
            score = similarity(hit)
            if score >= min_score:
                found.append((record, score))
        return found[:limit]

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """Hybrid search with the text the vector carries (scores: ``similarity``), in
        hindsight's order."""
        _no_metadata(metadata_filter)
        query = vector_text(query_embedding)
        return self.client.call(
            lambda c: self._search(c, query, scope_prefix, categories, limit, min_score)
        )

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """``search`` from an event loop."""
        _no_metadata(metadata_filter)
        query = vector_text(query_embedding)
        return await self.client.acall(
            lambda c: self._search(c, query, scope_prefix, categories, limit, min_score)
        )

    # -- one record, and the scope's records ------------------------------------

    async def _own(self, c: AsyncMemoryClient, memory_id: str) -> Stored | None:
        stored = await c.get(memory_id)
        if stored is None or stored.status != "active" or ROOT_TAG not in stored.tags:
            return None
        return stored

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The active memory with this id (any adapter's), as a record; else None."""

        async def get(c: AsyncMemoryClient) -> MemoryRecord | None:
            stored = await c.get(record_id)
            return None if stored is None or stored.status != "active" else _as_record(stored)

        return self.client.call(get)

    async def _records(self, c: AsyncMemoryClient, scope_prefix: str | None) -> list[Stored]:
        # The client has no listing by tag: a dry-run erasure finds the writes
        # carrying it (and changes nothing, nor is it audited).
        receipt = await c.erase(tag=scope_tags(_scope(scope_prefix))[-1], dry_run=True)
        found = [await self._own(c, i) for i in receipt.ids[:_MAX_LISTED]]
        return sorted((s for s in found if s is not None), key=lambda s: -s.created_at)

    def _listed(self, scope_prefix: str | None) -> list[MemoryRecord]:
        stored = self.client.call(lambda c: self._records(c, scope_prefix))
        return [_as_record(s) for s in stored]

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """CrewAI's memories in the scope, newest first."""
        return self._listed(scope_prefix)[offset : offset + limit]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many CrewAI memories the scope holds, their categories, dates, child scopes."""
        records = self._listed(scope)
        dates = [r.created_at for r in records]
        return ScopeInfo(
            path=_scope(scope),
            record_count=len(records),
            categories=sorted({c for r in records for c in r.categories}),
            oldest_record=min(dates, default=None),
            newest_record=max(dates, default=None),
            child_scopes=_children(_scope(scope), records),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The child scopes of ``parent`` that hold CrewAI memories."""
        return _children(_scope(parent), self._listed(parent))

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """The categories of CrewAI's memories in the scope, with their counts."""
        return dict(Counter(c for r in self._listed(scope_prefix) for c in r.categories))

    def count(self, scope_prefix: str | None = None) -> int:
        """How many CrewAI memories the scope holds."""
        return len(self._listed(scope_prefix))

    # -- erasure ----------------------------------------------------------------

    async def _delete(
        self,
        c: AsyncMemoryClient,
        scope_prefix: str | None,
        categories: list[str] | None,
        record_ids: list[str] | None,
        older_than: datetime | None,
    ) -> int:
        if record_ids is not None:
            owned = [s for s in [await self._own(c, i) for i in record_ids] if s is not None]
        else:
            owned = await self._records(c, scope_prefix)
        chosen = [
            s.id
            for s in owned
            if _in_scope(_as_record(s), _scope(scope_prefix))
            and (not categories or set(categories) & set(_as_record(s).categories))
            and (older_than is None or _when(s.created_at) < older_than)
        ]
        if not chosen:
            return 0
        return (await c.erase(chosen)).count

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Erase CrewAI's memories that match every criterion given; how many."""
        _no_metadata(metadata_filter)
        return self.client.call(
            lambda c: self._delete(c, scope_prefix, categories, record_ids, older_than)
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """``delete`` from an event loop."""
        _no_metadata(metadata_filter)
        return await self.client.acall(
            lambda c: self._delete(c, scope_prefix, categories, record_ids, older_than)
        )

    def reset(self, scope_prefix: str | None = None) -> None:
        """Erase every CrewAI memory of the scope (of the namespace: the root), every copy;
        the other adapters' memories stay."""
        tag = scope_tags(_scope(scope_prefix))[-1]
        self.client.call(lambda c: c.erase(tag=tag))


def _children(parent: str, records: Iterable[MemoryRecord]) -> list[str]:
    depth = len([p for p in parent.split("/") if p])
    found = set()
    for record in records:
        parts = [p for p in record.scope.split("/") if p]
        if len(parts) > depth and _in_scope(record, parent):
            found.add("/" + "/".join(parts[: depth + 1]))
    return sorted(found)


def _no_metadata(metadata_filter: dict[str, Any] | None) -> None:
    if metadata_filter:
        raise InvalidArgument("HindsightStorage does not keep a record's metadata: no filter")


def hindsight_memory(
    client: MemoryClient,
    *,
    mode: SearchMode = "hybrid",
    pool_wide: bool = True,
    wait: bool = False,
    **memory_options: Any,
) -> Memory:
    """A CrewAI ``Memory`` on the pool (``HindsightStorage`` and ``text_embedder``).

    ``memory_options`` are ``Memory``'s (``llm``, ``root_scope``, the weights,
    ...). CrewAI's consolidation (an LLM call when a new memory resembles an
    old one) is off unless ``consolidation_threshold`` is given: the workers
    merge duplicates and flag contradictions themselves.
    """
    memory_options.setdefault("consolidation_threshold", 1.0)
    storage = HindsightStorage(client, mode=mode, pool_wide=pool_wide, wait=wait)
    return Memory(storage=storage, embedder=text_embedder, **memory_options)
