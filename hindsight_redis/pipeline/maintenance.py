"""Stream upkeep a worker does between batches: trimming what every group acknowledged."""

from __future__ import annotations

import redis.asyncio as aioredis

from hindsight_redis.keys import Keys
from hindsight_redis.resp import as_text


def _id_tuple(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


async def trim_acknowledged(redis: aioredis.Redis, keys: Keys, keep_below: int) -> int:
    """Trim stream entries every group has acknowledged, once the stream passes ``keep_below``.

    Never trims an entry that is undelivered or pending in any group.
    """
    if await redis.xlen(keys.stream) <= keep_below:
        return 0
    boundary: tuple[int, int] | None = None
    for group in await redis.xinfo_groups(keys.stream):
        name = as_text(group["name"])
        limit = _id_tuple(as_text(group["last-delivered-id"]))
        if int(group["pending"]):
            summary = await redis.xpending(keys.stream, name)
            limit = min(limit, _id_tuple(as_text(summary["min"])))
        boundary = limit if boundary is None else min(boundary, limit)
    if boundary is None:
        return 0
    trimmed: int = await redis.xtrim(
        keys.stream, minid=f"{boundary[0]}-{boundary[1]}", approximate=False
    )
    return trimmed
