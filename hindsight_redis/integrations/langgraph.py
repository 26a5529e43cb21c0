"""LangGraph's long-term memory store on hindsight-redis: ``HindsightStore``.

``pip install "hindsight-redis[langgraph]"``. A ``langgraph.store.base.BaseStore``
(sync and async) over one namespace of the pool:

* a LangGraph namespace tuple ``("users", "alice")`` is a path inside it: the
  item's memory is tagged ``lg:``, ``lg:users``, ``lg:users/alice`` (each prefix,
  so a search by prefix is a tag filter) and ``partition:lg:users/alice``, so
  memories of different LangGraph namespaces are never merged or flagged
  against each other (``models.partition_of``);
* a value (a dict) is kept whole beside its memory (``client/items.py``): ``get`` after
  ``put`` reads it back at once, before any worker ran; the memory's text is
  the value's ``content`` field (``content_field``), or the fields ``index``
  names, or the value as JSON; ``index=False`` keeps the item without a memory;
* ``search`` with a ``query`` is the pool's hybrid search (scores are its
  ``fused``) within the prefix, then the ``filter`` on the values; without a
  query it lists the prefix's items, oldest first. A value whose text the
  filters dropped is still stored and listed, only not found by a query; one
  whose text merged into another item's memory is found through it.
* a new version of an item archives the memory of the old one; ``delete``
  archives it too (restorable with the client's ``restore``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.client.items import ItemPath, ItemStore, StoredItem, item_digest, path_json
from hindsight_redis.client.sync_client import MemoryClient
from hindsight_redis.core.models import PARTITION_TAG, SearchMode, Visibility
from hindsight_redis.errors import NotFound
from hindsight_redis.settings import Settings

SOURCE = "langgraph:"
"""The ``source`` of a store's memories: ``langgraph:<item digest>``."""
_MAX_CANDIDATES = 200


def path_label(path: Sequence[str]) -> str:
    """A path as one tag value: ``users/alice``, or a digest when labels would be ambiguous."""
    text = "/".join(path)
    if len(text) <= 96 and all(
        p and "/" not in p and "|" not in p and p.isprintable() for p in path
    ):
        return text
    return "#" + hashlib.sha256(path_json(path).encode()).hexdigest()[:24]


def path_tags(path: Sequence[str]) -> list[str]:
    """The tags of an item's memory: one per prefix of its path, and its partition."""
    tags = [f"lg:{path_label(path[:n])}" for n in range(len(path) + 1)]
    return [*tags, f"{PARTITION_TAG}lg:{path_label(path)}"]


def matches(value: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    """Whether an item's value passes a LangGraph ``filter`` (exact values, ``$eq``,
    ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``; nested dicts compare field by field)."""
    return all(_compare(value.get(k), f) for k, f in (filters or {}).items())


def _compare(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(found, k, v) for k, v in wanted.items())
        return isinstance(found, dict) and all(_compare(found.get(k), v) for k, v in wanted.items())
    return bool(found == wanted)


def _operator(found: Any, name: str, wanted: Any) -> bool:
    if name == "$eq":
        return bool(found == wanted)
    if name == "$ne":
        return bool(found != wanted)
    if name not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {name!r}")
    try:
        a, b = float(found), float(wanted)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[name]


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def _item(stored: StoredItem) -> Item:
    return Item(
        value=stored.value,
        key=stored.key,
        namespace=stored.path,
        created_at=_when(stored.created_at),
        updated_at=_when(stored.updated_at),
    )


class HindsightStore(BaseStore):
    """A LangGraph ``BaseStore`` on one namespace of the memory pool (see the module doc).

    ``HindsightStore(settings)`` opens its own client (closed by ``close()``
    or ``with``); or pass a ``MemoryClient``. ``content_field`` is the value
    field whose text becomes the memory; ``index_fields`` the default paths
    for it instead (LangGraph's ``index``); ``search_mode`` the search's mode;
    ``visibility``/``task_type`` those of the memories written.
    """

    supports_ttl = False

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        client: MemoryClient | None = None,
        content_field: str = "content",
        index_fields: list[str] | None = None,
        search_mode: SearchMode = "hybrid",
        visibility: Visibility = "shared",
        task_type: str | None = None,
    ) -> None:
        self._owns_client = client is None
        self.client = client or MemoryClient(settings)
        self.content_field = content_field
        self.index_fields = index_fields
        self.search_mode: SearchMode = search_mode
        self.visibility: Visibility = visibility
        self.task_type = task_type

    def close(self) -> None:
        """Close the client this store opened."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> HindsightStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; one result each (LangGraph's ``batch``)."""
        todo = list(ops)
        return self.client.call(lambda c: self._run(c, todo))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` from an event loop."""
        todo = list(ops)
        return await self.client.acall(lambda c: self._run(c, todo))

    async def _run(self, client: AsyncMemoryClient, ops: list[Op]) -> list[Result]:
        items = ItemStore(await client.connect(), client.keys)
        if any(isinstance(op, PutOp | SearchOp) for op in ops):
            await self._archive_retired(client, items)
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                stored = await items.get(tuple(op.namespace), op.key)
                results.append(None if stored is None else _item(stored))
            elif isinstance(op, PutOp):
                await self._put(client, items, op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(client, items, op))
            elif isinstance(op, ListNamespacesOp):
                results.append(_list_namespaces(list(await items.paths()), op))
            else:
                raise TypeError(f"unknown store operation {op!r}")
        return results

    # -- writes -----------------------------------------------------------------

    def _text(self, value: dict[str, Any], index: Any) -> str:
        """The memory's text of a value ("" for none)."""
        if index is False:
            return ""
        fields = index if isinstance(index, list) else self.index_fields
        if fields:
            parts = [t for f in fields for t in get_text_at_path(value, tokenize_path(f))]
            return "\n".join(p for p in parts if p.strip())
        found = value.get(self.content_field)
        if isinstance(found, str) and found.strip():
            return found
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    async def _put(self, client: AsyncMemoryClient, items: ItemStore, op: PutOp) -> None:
        path = tuple(op.namespace)
        if op.value is None:
            old = await items.delete(path, op.key)
            if old:
                await self._retire(client, items, old)
            return
        value = dict(op.value)
        raw = json.dumps(value, ensure_ascii=False).encode()
        text = self._text(value, op.index)[: client.settings.max_content_chars]
        sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() if text else ""
        current = await items.get(path, op.key)
        memory_id = ""
        if text and current is not None and current.content_sha == sha and current.memory_id:
            memory_id = current.memory_id  # same text: the memory stays
        elif text:
            receipt = await client.write(
                text,
                tags=path_tags(path),
                source=SOURCE + item_digest(path, op.key),
                visibility=self.visibility,
                task_type=self.task_type,
            )
            memory_id = receipt.id
        now = datetime.now(UTC).timestamp()
        _, old = await items.put(path, op.key, raw, memory_id=memory_id, content_sha=sha, now=now)
        if old and old != memory_id:
            await self._retire(client, items, old)

    async def _retire(self, client: AsyncMemoryClient, items: ItemStore, memory_id: str) -> None:
        """Archive the memory of a replaced or deleted version (later, if not indexed yet)."""
        try:
            await client.forget(memory_id, force=True)
        except NotFound:
            if await client.get(memory_id) is None:  # still on its way: archive it once indexed
                await items.retire(memory_id)

    async def _archive_retired(self, client: AsyncMemoryClient, items: ItemStore) -> None:
        done = []
        for memory_id in await items.retired():
            record = await client.get(memory_id)
            if record is None:
                continue  # not processed yet
            if record.status == "active":
                await client.forget(memory_id, force=True)
            done.append(memory_id)
        await items.unretire(done)

    # -- reads ------------------------------------------------------------------

    async def _search(
        self, client: AsyncMemoryClient, items: ItemStore, op: SearchOp
    ) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if not op.query:
            return await _list_items(items, prefix, op)
        want = op.offset + op.limit
        top_k = min(max(4 * want, 20), _MAX_CANDIDATES)
        hits = await client.search(
            op.query, top_k=top_k, mode=self.search_mode, tags=[f"lg:{path_label(prefix)}"]
        )
        if not hits:
            return []
        sources = await items.sources([h.id for h in hits])
        digests = list(
            dict.fromkeys(
                s.removeprefix(SOURCE) for row in sources for s in row if s.startswith(SOURCE)
            )
        )
        by_digest = {d: i for d, i in zip(digests, await items.load(digests), strict=True) if i}
        found: list[SearchItem] = []
        seen: set[str] = set()
        for hit, row in zip(hits, sources, strict=True):
            for source in row:
                stored = by_digest.get(source.removeprefix(SOURCE))
                if stored is None or stored.digest in seen or stored.path[: len(prefix)] != prefix:
                    continue
                if not await _speaks_for(client, items, stored, hit.id):
                    continue
                if matches(stored.value, op.filter):
                    seen.add(stored.digest)
                    found.append(_search_item(stored, hit.fused))
        return found[op.offset : want]


async def _speaks_for(
    client: AsyncMemoryClient, items: ItemStore, stored: StoredItem, memory_id: str
) -> bool:
    """Whether ``memory_id`` is the item's memory: its own, or the one its text merged into."""
    if stored.memory_id == memory_id:
        return True
    if not stored.memory_id:
        return False
    record = await client.get(stored.memory_id)
    if record is not None and record.status == "merged" and record.merged_into == memory_id:
        await items.retarget(stored.digest, stored.memory_id, memory_id)  # remembered for good
        return True
    return False


def _search_item(stored: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=stored.path,
        key=stored.key,
        value=stored.value,
        created_at=_when(stored.created_at),
        updated_at=_when(stored.updated_at),
        score=score,
    )


async def _list_items(items: ItemStore, prefix: ItemPath, op: SearchOp) -> list[SearchItem]:
    """A search without a query: the prefix's items, oldest first, filtered, one page."""
    paths = [p for p in await items.paths() if p[: len(prefix)] == prefix]
    entries = sorted(await items.keys_of(paths))
    want = op.offset + op.limit
    found: list[SearchItem] = []
    step = want if not op.filter else max(want, 100)
    for start in range(0, len(entries), step):
        chunk = entries[start : start + step]
        loaded = await items.load([item_digest(path, key) for _, path, key in chunk])
        found.extend(_search_item(s, None) for s in loaded if s and matches(s.value, op.filter))
        if len(found) >= want:
            break
    return found[op.offset : want]


def _list_namespaces(paths: list[ItemPath], op: ListNamespacesOp) -> list[tuple[str, ...]]:
    """LangGraph's ``list_namespaces`` over the paths in use."""
    for condition in op.match_conditions or ():
        paths = [p for p in paths if _path_matches(p, condition.match_type, condition.path)]
    if op.max_depth is not None:
        paths = [p[: op.max_depth] for p in paths]
    return sorted(set(paths))[op.offset : op.offset + op.limit]


def _path_matches(path: ItemPath, kind: str, pattern: Sequence[str]) -> bool:
    if len(path) < len(pattern):
        return False
    pairs = (
        zip(path, pattern, strict=False)
        if kind == "prefix"
        else zip(reversed(path), reversed(pattern), strict=False)
    )
    return all(want == "*" or have == want for have, want in pairs)
