"""Bytes per memory through the public path, every key counted (issue 36).

The held-out LoCoMo turns (conversations 3-4) are written with ``write_many`` as the recall
benchmark writes them, the filters off (every turn a memory, bar exact twins), and drained by
a burst ``Worker`` in this process (the contextual refine included). Then, once the search
module's GC has run: the growth of ``used_memory`` per memory (all-in), and where it went:
the ``MEMORY USAGE`` of every key of the namespace summed by kind (the memory hashes, content
claims, outcomes, the stream...), the index (``FT.INFO``, each vector field's
``FT.DEBUG VECSIM_INFO``), and what is left (allocator overhead, the server's own). "Steady"
is the same after what expires has gone: every key with an expiry deleted (outcomes, content
claims), the stream trimmed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from redis.asyncio import Redis

from benchmarks import locomo
from benchmarks.harness import bench_settings
from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.core.keys import Keys

CONTEXT_TURNS = 2  # as the recall benchmark writes them


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def held_out_items(limit: int | None = None) -> list[dict[str, Any]]:
    """The held-out turns as the recall benchmark writes them (the first ``limit``)."""
    data = locomo.load()[locomo.HELD_OUT + 1 :]
    return [
        {
            "content": t.content,
            "source": t.dia_id,
            "session_id": t.conversation,
            "tags": [t.date],
            "occurred_at": locomo.session_time(t.date),
        }
        for t in locomo.turns(data)[:limit]
    ]


async def used_memory(redis: Redis) -> int:
    """``used_memory`` once the search module's GC has collected, in every index (those of
    a benchmark's earlier phases too)."""
    for index in await redis.execute_command("FT._LIST"):  # type: ignore[no-untyped-call]
        await redis.execute_command("FT.DEBUG", "GC_FORCEINVOKE", index)  # type: ignore[no-untyped-call]
    await asyncio.sleep(0.5)
    return int((await redis.info("memory"))["used_memory"])


async def by_kind(redis: Redis, keys: Keys) -> dict[str, int]:
    """``MEMORY USAGE`` of every key of the namespace, summed by kind (the name's segment
    after the namespace: ``mem``, ``content``, ``outcome``, ``stream``...)."""
    found = [_text(k) async for k in redis.scan_iter(match=keys.pattern, count=1000)]
    sizes: Counter[str] = Counter()
    for start in range(0, len(found), 1000):
        chunk = found[start : start + 1000]
        async with redis.pipeline(transaction=False) as pipe:
            for key in chunk:
                pipe.memory_usage(key, samples=0)
            usages = await pipe.execute()
        for key, usage in zip(chunk, usages, strict=True):
            sizes[key[len(keys.base) + 1 :].split(":", 1)[0]] += int(usage or 0)
    return dict(sizes)


async def index_bytes(redis: Redis, alias: str) -> dict[str, float]:
    """The index's total memory and each vector field's (``VECSIM_INFO``), in bytes."""
    info = await redis.ft(alias).info()  # type: ignore[no-untyped-call]
    name = _text(info["index_name"])
    out = {"index": float(info["total_index_memory_sz_mb"]) * 2**20}  # the vectors apart
    for attribute in info["attributes"]:
        pairs = dict(zip(map(_text, attribute[0::2]), attribute[1::2], strict=False))
        if _text(pairs.get("type", "")) != "VECTOR":
            continue
        field = _text(pairs["identifier"])
        reply = await redis.execute_command("FT.DEBUG", "VECSIM_INFO", name, field)  # type: ignore[no-untyped-call]
        vecsim = dict(zip(map(_text, reply[0::2]), reply[1::2], strict=True))
        out[f"vectors {field}"] = float(vecsim.get("MEMORY", 0))
    return out


async def expire_all(redis: Redis, keys: Keys) -> None:
    """Delete every key of the namespace that has an expiry (outcomes, content claims...):
    what steady state no longer holds."""
    found = [k async for k in redis.scan_iter(match=keys.pattern, count=1000)]
    for start in range(0, len(found), 1000):
        chunk = found[start : start + 1000]
        async with redis.pipeline(transaction=False) as pipe:
            for key in chunk:
                pipe.ttl(key)
            ttls = await pipe.execute()
        expiring = [key for key, ttl in zip(chunk, ttls, strict=True) if ttl >= 0]
        if expiring:
            await redis.delete(*expiring)


async def snapshot(redis: Redis, keys: Keys, before: int, memories: int) -> dict[str, float]:
    """All-in bytes per memory and their breakdown."""
    total = await used_memory(redis) - before
    kinds = await by_kind(redis, keys)
    index = await index_bytes(redis, keys.index_alias)
    out = {"all_in": total / memories}
    out |= {f"keys {kind}": size / memories for kind, size in sorted(kinds.items())}
    out |= {k: v / memories for k, v in index.items()}
    counted = sum(kinds.values()) + sum(index.values())
    out["other"] = (total - counted) / memories  # MEMORY USAGE's estimates, allocator rounding
    return out


async def bytes_per_memory(
    url: str, embedder: str = "local", limit: int | None = None
) -> dict[str, Any]:
    """Write the held-out turns (filters off), drain them; the bytes per memory right after
    and at steady state (outcomes expired, stream trimmed)."""
    settings = bench_settings(url, embedder=embedder, filters_enabled=False, namespace="bytes")
    keys = Keys(settings.key_prefix, settings.namespace)
    items = held_out_items(limit)
    redis = Redis.from_url(url)
    try:
        async with AsyncMemoryClient(settings) as client:
            await client.write("warm-up: the index exists before the first measure")
            await Worker(settings).run_async(burst=True)
            before = await used_memory(redis)
            for start in range(0, len(items), 500):
                chunk = items[start : start + 500]
                await client.write_many(chunk, context_from_previous=CONTEXT_TURNS)
        report = await Worker(settings).run_async(burst=True)
        docs = [k async for k in redis.scan_iter(match=keys.doc_prefix + "*", count=1000)]
        memories = len(docs) - 1  # the warm-up's
        after = await snapshot(redis, keys, before, memories)
        await expire_all(redis, keys)
        await redis.xtrim(keys.stream, maxlen=0)
        steady = await snapshot(redis, keys, before, memories)
    finally:
        await redis.aclose()
    return {
        "writes": len(items),
        "memories": memories,
        "indexed": report.indexed,
        "merged": report.merged,
        "dropped": report.dropped,
        "after_ingest": after,
        "steady": steady,
    }


def report(figures: dict[str, Any]) -> None:
    """The table, in markdown."""
    after, steady = figures["after_ingest"], figures["steady"]
    print(
        f"\n## Bytes per memory ({figures['memories']:,} memories of {figures['writes']:,} "
        "held-out writes, filters off)\n"
    )
    print("| | right after ingest | steady |\n|---|---:|---:|")
    for key in after:
        label = f"**{key}**" if key == "all_in" else key
        print(f"| {label} | {after[key]:,.0f} | {steady.get(key, 0.0):,.0f} |")
