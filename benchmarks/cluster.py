"""Redis Cluster on this machine: ingest and hybrid search on 1, 2 and 3 shards against one
server (the baseline), and what one shard holds.

Setups, in one run and in turn: the embedded single server, then local clusters (the
package's ``LocalCluster``, as ``server start --cluster N``: no replicas, profile
``ephemeral``) of 1, 2 and 3 masters. In each, 6 namespaces spread evenly over the shards
(names picked by their hash slot); ``--writes`` LoCoMo-derived writes spread over them,
written first, then drained by 2 ``worker --all-namespaces --burst`` processes (local
embedder, filters on, no contextual refiner): memories/s from the first processed write to
the last. Then ``--searches`` hybrid searches (LoCoMo turns as queries, ``top_k`` 5, 4 at a
time, the namespaces in turn) from one client: p50/p99.

Capacity: on one server (a shard is one), ``--capacity`` memories of LoCoMo sentences stored
as workers store them (both vectors in the index's two HNSW fields, stand-in contextual
vectors), and Redis ``used_memory`` before and after: bytes per memory, memories per GB.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from benchmarks import locomo
from benchmarks.harness import DirectIndex, bench_settings, drain, embedded_redis
from benchmarks.measure import p50_p99, ratio
from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.keys import Keys
from hindsight_redis.redis.cluster import node_of
from hindsight_redis.redis.connection import open_redis
from hindsight_redis.redis.server import get_profile
from hindsight_redis.redis.server.local_cluster import LocalCluster

SUMMARY = "local Redis Cluster of 1-3 shards vs one server: drain memories/s, hybrid p50 / p99"
NAMESPACES = 6
CONCURRENT_SEARCHES = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--writes", type=int, help="default 12,000 (quick 1,000)")
    parser.add_argument("--searches", type=int, help="default 800 (quick 100)")
    parser.add_argument("--capacity", type=int, help="memories stored (50,000; quick 2,000)")


def spread(redis: Redis, prefix: str, shards: int) -> list[str]:
    """``NAMESPACES`` names, as many on each shard (any names on one server)."""
    per_shard = NAMESPACES // max(shards, 1)
    picked: dict[str, list[str]] = {}
    for n in range(10_000):
        name = f"n{n}"
        home = node_of(redis, Keys(prefix, name).stream) or "server"
        if len(picked.setdefault(home, [])) < per_shard:
            picked[home].append(name)
        if sum(map(len, picked.values())) >= NAMESPACES:
            break
    return sorted(name for names in picked.values() for name in names)


async def setup(url: str, shards: int, texts: list[str], searches: int) -> dict[str, Any]:
    """Drain rate and hybrid search latency on the server (or cluster) at ``url``."""
    settings = bench_settings(url, namespace="n0", embedder="local", contextual_embedder="none")
    redis = await open_redis(url, connection=settings.connection)
    try:
        names = spread(redis, settings.key_prefix, shards)
        clients = {
            n: AsyncMemoryClient(settings.model_copy(update={"namespace": n}), redis=redis)
            for n in names
        }
        for k, name in enumerate(names):
            mine = texts[k :: len(names)]
            for first in range(0, len(mine), 500):
                await clients[name].write_many([{"content": t} for t in mine[first : first + 500]])
        rate = (await drain(redis, settings, names, len(texts)))["rate"]
        latencies = await search(clients, searches)
    finally:
        await redis.aclose()
    return {"rate": rate, "search_ms": p50_p99(latencies)}


async def search(clients: dict[str, AsyncMemoryClient], count: int) -> list[float]:
    """Milliseconds of ``count`` hybrid searches, ``CONCURRENT_SEARCHES`` at a time."""
    queries = [q[:80] for q in random.Random(5).sample(locomo.texts(), count)]
    names = list(clients)
    for name in names:  # opens each searcher (index check, query embedder) before the clock
        await clients[name].search("warm up", top_k=5)
    latencies: list[float] = []
    slots = asyncio.Semaphore(CONCURRENT_SEARCHES)

    async def one(n: int, query: str) -> None:
        async with slots:
            started = time.perf_counter()
            await clients[names[n % len(names)]].search(query, top_k=5)
            latencies.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(*(one(n, q) for n, q in enumerate(queries)))
    return latencies


async def capacity(url: str, count: int) -> dict[str, float]:
    """``used_memory`` per memory as workers store them, both vectors indexed."""
    redis = Redis.from_url(url)
    try:
        index = await DirectIndex.open(redis, bench_settings(url, namespace="cap"))
        before = int((await redis.info("memory"))["used_memory"])
        rng, sentences = random.Random(7), locomo.Sentences()
        await index.add(
            [{"event_id": f"m{n}", "content": sentences.text(rng)} for n in range(count)],
            context="stand-in",
        )
        after = int((await redis.info("memory"))["used_memory"])
        ft_info = await redis.ft(index.info.name).info()  # type: ignore[no-untyped-call]
        vectors_mb = float(ft_info["vector_index_sz_mb"])
    finally:
        await redis.aclose()
    per = (after - before) / count
    return {
        "bytes": per,
        "per_gb": 2**30 / per,
        "vectors_mb": vectors_mb,
        "total_mb": (after - before) / 2**20,
    }


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    writes = args.writes or (1_000 if args.quick else 12_000)
    searches = args.searches or (100 if args.quick else 800)
    texts = locomo.derived_texts(writes)
    with embedded_redis() as url:
        rows = {"one server": await setup(url, 0, texts, searches)}
        cap = await capacity(url, args.capacity or (2_000 if args.quick else 50_000))
    for shards in (1, 2, 3):
        with tempfile.TemporaryDirectory(prefix="hs-cluster-") as tmp:
            cluster = LocalCluster(Path(tmp), get_profile("ephemeral"), masters=shards, port=0)
            state = cluster.start()
            try:
                label = f"cluster, {shards} shard{'s' if shards > 1 else ''}"
                rows[label] = await setup(state.url, shards, texts, searches)
            finally:
                cluster.stop()
    for row in rows.values():
        row["vs_one_server"] = ratio(row["rate"], rows["one server"]["rate"])
    return {"writes": writes, "searches": searches, "setups": rows, "capacity": cap}


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures = asyncio.run(measure(args))
    print(
        f"\n## {figures['writes']:,} writes over {NAMESPACES} namespaces, 2 workers, then "
        f"{figures['searches']} hybrid searches, {CONCURRENT_SEARCHES} at a time\n"
    )
    print(
        "| setup | memories/s | vs one server | hybrid p50 ms | p99 ms |\n|---|---:|---:|---:|---:|"
    )
    for name, row in figures["setups"].items():
        print(
            f"| {name} | {row['rate']:,.0f} | {row['vs_one_server']:.0%} | "
            f"{row['search_ms']['p50']:.1f} | {row['search_ms']['p99']:.1f} |"
        )
    cap = figures["capacity"]
    print(
        f"\ncapacity: {cap['bytes']:,.0f} bytes per memory ({cap['per_gb']:,.0f} per GB), "
        f"vector indexes {cap['vectors_mb']:,.0f} MB of {cap['total_mb']:,.0f} MB"
    )
    return figures
