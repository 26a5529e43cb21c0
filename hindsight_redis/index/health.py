"""The health of a namespace's index, as ``doctor`` reports it."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text, reply_map
from hindsight_redis.errors import RedisCommandError, redis_errors
from hindsight_redis.index.record import recorded_index


async def index_health(redis: Redis, keys: Keys) -> dict[str, Any]:
    """Index health of ``keys.namespace`` for ``doctor``: docs, failures, progress, model, dims."""
    info = await recorded_index(redis, keys)
    if info is None:
        return {"exists": False}
    try:
        with redis_errors("read the index"):
            raw = reply_map(await redis.execute_command("FT.INFO", info.alias))  # type: ignore[no-untyped-call]
    except RedisCommandError as e:  # (an index named before 0.2: adopted by ensure)
        return {"exists": False, "error": e.reply, "model_id": info.model_id, "name": info.name}
    return {
        "exists": True,
        "name": info.name,
        "alias": info.alias,
        "generation": info.generation,
        "model_id": info.model_id,
        "dims": info.dims,
        "context_model": info.context_model or None,
        "datatype": info.datatype,
        "context_datatype": info.context_datatype if info.has_context else None,
        "context_projection": info.context_projection or None,
        "num_docs": int(float(as_text(raw.get("num_docs", 0)))),
        "hash_indexing_failures": int(float(as_text(raw.get("hash_indexing_failures", 0)))),
        "percent_indexed": float(as_text(raw.get("percent_indexed", 1))),
        "indexing": as_text(raw.get("indexing", 0)) not in ("0", ""),
    }
