"""Keyed items: a JSON value under a path and a key, kept beside the memory made of it.

What a key-value API over the memory pool needs (``integrations.langgraph``):
a ``put`` is readable by ``get`` at once, exactly as given, while its text
goes the usual way (stream, filters, index) as a memory whose id the item
records. Per namespace: one hash per item (``Keys.item``), a sorted set of
each path's keys (``Keys.items_of``, by creation time) and a hash of the
paths in use (``Keys.item_paths``); the scripts keep the three in step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.documents import split_tags, with_merged_sources
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import redis_errors
from hindsight_redis.redis import scripts

ItemPath = tuple[str, ...]
_FIELDS = ("path", "key", "value", "created_at", "updated_at", "memory_id", "content_sha")


def path_json(path: Sequence[str]) -> str:
    """A path as the JSON text it is stored and compared as."""
    return json.dumps(list(path), ensure_ascii=False, separators=(",", ":"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def item_digest(path: Sequence[str], key: str) -> str:
    """The stable id of the item at ``path`` / ``key``."""
    return _digest(f"{path_json(path)}\0{key}")


def path_digest(path: Sequence[str]) -> str:
    """The stable id of a path (the name of its key set)."""
    return _digest(path_json(path))


@dataclass(frozen=True, slots=True)
class StoredItem:
    """One item as stored; ``memory_id`` is "" for an item kept without a memory."""

    path: ItemPath
    key: str
    value: dict[str, Any]
    created_at: float
    updated_at: float
    memory_id: str
    content_sha: str
    digest: str


def _item(digest: str, values: Sequence[Any]) -> StoredItem | None:
    if values[0] is None:
        return None
    text = dict(zip(_FIELDS, (as_text(v) for v in values), strict=True))
    return StoredItem(
        path=tuple(json.loads(text["path"])),
        key=text["key"],
        value=json.loads(text["value"]),
        created_at=float(text["created_at"] or 0.0),
        updated_at=float(text["updated_at"] or 0.0),
        memory_id=text["memory_id"],
        content_sha=text["content_sha"],
        digest=digest,
    )


class ItemStore:
    """The keyed items of one namespace."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    async def load(self, digests: Sequence[str]) -> list[StoredItem | None]:
        """The items with these digests, in order (None for an absent one); one round trip."""
        if not digests:
            return []
        with redis_errors("read items"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for digest in digests:
                    pipe.hmget(self.keys.item(digest), list(_FIELDS))
                rows = await pipe.execute()
        return [_item(d, row) for d, row in zip(digests, rows, strict=True)]

    async def get(self, path: ItemPath, key: str) -> StoredItem | None:
        """The item at ``path`` / ``key``, or None."""
        return (await self.load([item_digest(path, key)]))[0]

    async def put(
        self,
        path: ItemPath,
        key: str,
        value: bytes,
        *,
        memory_id: str,
        content_sha: str,
        now: float,
    ) -> tuple[float, str]:
        """Store (or replace) an item; its creation time and the memory id it had before."""
        with redis_errors("store the item"):
            reply: Any = await scripts.put_item(
                self.redis,
                item=self.keys.item(item_digest(path, key)),
                members=self.keys.items_of(path_digest(path)),
                paths=self.keys.item_paths,
                path=path_json(path),
                key=key,
                value=value,
                now=f"{now:.6f}",
                memory_id=memory_id,
                content_sha=content_sha,
            )
        return float(as_text(reply[0])), as_text(reply[1])

    async def delete(self, path: ItemPath, key: str) -> str | None:
        """Delete an item; the memory id it had ("" for none), None when there was no item."""
        with redis_errors("delete the item"):
            reply: Any = await scripts.delete_item(
                self.redis,
                item=self.keys.item(item_digest(path, key)),
                members=self.keys.items_of(path_digest(path)),
                paths=self.keys.item_paths,
                path=path_json(path),
                key=key,
            )
        return None if reply is None else as_text(reply)

    async def paths(self) -> dict[ItemPath, int]:
        """Every path holding items, with how many."""
        with redis_errors("list item paths"):
            found: Any = await self.redis.hgetall(self.keys.item_paths)
        return {tuple(json.loads(as_text(p))): int(n) for p, n in found.items() if int(n) > 0}

    async def keys_of(self, paths: Sequence[ItemPath]) -> list[tuple[float, ItemPath, str]]:
        """(creation time, path, key) of every item of ``paths``."""
        if not paths:
            return []
        with redis_errors("list items"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for path in paths:
                    pipe.zrange(self.keys.items_of(path_digest(path)), 0, -1, withscores=True)
                replies = await pipe.execute()
        return [
            (float(score), path, as_text(key))
            for path, members in zip(paths, replies, strict=True)
            for key, score in members
        ]

    async def sources(self, memory_ids: Sequence[str]) -> list[tuple[str, ...]]:
        """Each memory's sources (its own and those of the writes merged into it)."""
        with redis_errors("read memory sources"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for memory_id in memory_ids:
                    pipe.hget(self.keys.doc(memory_id), "sources")
                    pipe.hget(self.keys.merge_log, memory_id)  # merged in, not folded yet
                rows = await pipe.execute()
        pairs = zip(rows[::2], rows[1::2], strict=True)
        return [split_tags(with_merged_sources(stored, pending)) for stored, pending in pairs]

    async def retarget(self, digest: str, expected: str, memory_id: str) -> bool:
        """Point an item at ``memory_id`` unless its memory is no longer ``expected``."""
        with redis_errors("update the item"):
            done = await scripts.retarget_item(
                self.redis, item=self.keys.item(digest), expected=expected, memory_id=memory_id
            )
        return bool(done)

    async def retire(self, memory_id: str) -> None:
        """Remember a replaced version's memory, written but not indexed yet, to archive later."""
        with redis_errors("note a replaced memory"):
            await self.redis.sadd(self.keys.item_retired, memory_id)

    async def retired(self) -> list[str]:
        """The replaced versions still to archive."""
        with redis_errors("read replaced memories"):
            found: Any = await self.redis.smembers(self.keys.item_retired)
        return sorted(as_text(m) for m in found)

    async def unretire(self, memory_ids: Sequence[str]) -> None:
        """Forget about replaced versions that are archived (or never became memories)."""
        if memory_ids:
            with redis_errors("update replaced memories"):
                await self.redis.srem(self.keys.item_retired, *memory_ids)
