"""The export files a namespace wrote: where, when, and which memories each holds.

``export`` records every file it writes: ``Keys.exports`` maps the file's
absolute path to when it was written, the status exported, how many memories
and a digest of their ids; ``Keys.export_ids`` keeps the ids themselves
(zlib'd, a few bytes per memory). An erasure cannot reach into files, but it
can name those still holding what it erased (``exports_holding``), for an
operator to delete or rewrite; an import skips the memories erased since
(``Keys.erased``).
"""

from __future__ import annotations

import hashlib
import json
import time
import zlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import redis_errors


@dataclass(frozen=True, slots=True)
class ExportRecord:
    """One export file as recorded when it was written; ``holding``: how many of the ids
    asked about it holds (``exports_holding``)."""

    path: str
    exported_at: float
    status: str
    count: int
    digest: str
    holding: int = 0


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def ids_digest(ids: Collection[str]) -> str:
    """A digest of a set of memory ids (the same set, in any order, gives the same one)."""
    return _digest("\n".join(sorted(set(ids))))


async def record_export(
    redis: Redis,
    keys: Keys,
    path: Path,
    ids: Sequence[str],
    *,
    status: str,
    at: float | None = None,
) -> ExportRecord:
    """Record that the file at ``path`` now holds the memories ``ids`` (a file written again
    under the same path replaces its record)."""
    where = str(path.resolve())
    when = time.time() if at is None else at
    record = ExportRecord(where, when, status, len(ids), ids_digest(ids) if ids else "")
    packed = zlib.compress("\n".join(ids).encode(), 6)
    meta = {k: getattr(record, k) for k in ("exported_at", "status", "count", "digest")}
    with redis_errors("record the export file"):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.set(keys.export_ids(_digest(where)), packed)
            pipe.hset(keys.exports, where, json.dumps(meta))
            await pipe.execute()
    return record


async def list_exports(redis: Redis, keys: Keys) -> list[ExportRecord]:
    """Every export file recorded, oldest first."""
    with redis_errors("list the export files"):
        found: Any = await redis.hgetall(keys.exports)
    records = []
    for raw_path, raw in found.items():
        meta = json.loads(as_text(raw))
        records.append(
            ExportRecord(
                path=as_text(raw_path),
                exported_at=float(meta.get("exported_at") or 0.0),
                status=str(meta.get("status", "")),
                count=int(meta.get("count") or 0),
                digest=str(meta.get("digest", "")),
            )
        )
    return sorted(records, key=lambda r: (r.exported_at, r.path))


async def exports_holding(redis: Redis, keys: Keys, ids: Collection[str]) -> list[ExportRecord]:
    """The recorded export files holding any of ``ids``, each with how many of them."""
    wanted = set(ids)
    if not wanted:
        return []
    records = await list_exports(redis, keys)
    if not records:
        return []
    with redis_errors("read the export files' ids"):
        blobs: Any = await redis.mget([keys.export_ids(_digest(r.path)) for r in records])
    holding = []
    for record, blob in zip(records, blobs, strict=True):
        held = set(zlib.decompress(blob).decode().split("\n")) if blob else set()
        found = len(held & wanted)
        if found:
            holding.append(
                ExportRecord(
                    record.path,
                    record.exported_at,
                    record.status,
                    record.count,
                    record.digest,
                    holding=found,
                )
            )
    return holding


async def erased_among(redis: Redis, keys: Keys, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` were erased (``trust.erasure``): an import leaves them out."""
    if not ids:
        return set()
    with redis_errors("check which memories were erased"):
        found: Any = await redis.smismember(keys.erased, list(ids))
    return {memory_id for memory_id, hit in zip(ids, found, strict=True) if hit}
