"""Redis Cluster on this machine: ingest and hybrid search on 1, 2 and 3 shards beside one
server, and what one shard holds.

    python benchmarks/cluster.py             # figures in benchmarks/README.md (about 5 min)
    python benchmarks/cluster.py --quick     # smaller sizes

Setups, in one run and in turn: the embedded single server, then local clusters
(``server start --cluster N``, no replicas, profile ``ephemeral``) of 1, 2 and 3 masters.
In each, 6 namespaces spread evenly over the shards (names picked by their hash slot);
``--writes`` LoCoMo-derived writes (ingest.py's texts) spread over them, written first,
then drained by 2 ``worker --all-namespaces --burst`` processes (local embedder, filters
on, no contextual refiner): memories/s from the first processed write to the last. Then
``--searches`` hybrid searches (LoCoMo turns as queries, ``top_k`` 5, 4 at a time, the
namespaces in turn) from one client process: p50/p99.

Capacity: on one server (a shard is one), ``--capacity`` memories of LoCoMo sentences
stored as workers store them (the ``local`` embedder's 256-dim vector and a 384-dim
contextual vector, as the refiner adds, in the index's two HNSW fields), and Redis
``used_memory`` before and after: bytes per memory, memories per GB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.cluster import node_of
from hindsight_redis.connection import open_redis
from hindsight_redis.index import MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.providers.embedders import contextual_from_settings, make_embedder
from hindsight_redis.server import get_profile
from hindsight_redis.server.local_cluster import LocalCluster

from common import embedded_redis, locomo_turns, percentile
from ingest import e2e_texts
from search_latency import LocomoCorpus, ingest

NAMESPACES = 6
WORKERS = 2
CONCURRENT_SEARCHES = 4


def _settings(url: str) -> Settings:
    return Settings(
        redis_url=url, key_prefix=f"b{uuid.uuid4().hex[:6]}", namespace="n0", profile="ephemeral",
        embedder="local", contextual_embedder="none", max_backlog=10_000_000,
    )  # fmt: skip


def _spread(redis: Redis, prefix: str, shards: int) -> list[str]:
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


async def _processed(redis: Redis, prefix: str, namespaces: Sequence[str]) -> int:
    pipe = redis.pipeline(transaction=False)
    for namespace in namespaces:
        pipe.hget(Keys(prefix, namespace).stats, "processed")
    return sum(int(v or 0) for v in await pipe.execute())


async def run_setup(url: str, shards: int, texts: list[str], searches: int) -> dict[str, float]:
    """Drain rate and hybrid search latency on the server (or cluster) at ``url``."""
    settings = _settings(url)
    redis = await open_redis(url, connection=settings.connection)
    try:
        names = _spread(redis, settings.key_prefix, shards)
        clients = {
            n: AsyncMemoryClient(settings.model_copy(update={"namespace": n}), redis=redis)
            for n in names
        }
        for k, name in enumerate(names):
            mine = texts[k :: len(names)]
            for first in range(0, len(mine), 500):
                await clients[name].write_many([{"content": t} for t in mine[first : first + 500]])
        env = {**os.environ, **settings.to_env()}
        command = [sys.executable, "-m", "hindsight_redis.cli", "worker", "--all-namespaces"]
        procs = [
            subprocess.Popen([*command, "--burst"], env=env, stdout=subprocess.DEVNULL)
            for _ in range(WORKERS)
        ]
        started = first_done = None
        while (done := await _processed(redis, settings.key_prefix, names)) < len(texts):
            if started is None and done:
                started, first_done = time.perf_counter(), done
            await asyncio.sleep(0.01)
        rate = (len(texts) - (first_done or 0)) / (time.perf_counter() - (started or 0.0))
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
        latencies = await _search(clients, searches)
    finally:
        await redis.aclose()
    return {
        "rate": rate,
        "p50": percentile(latencies, 50) * 1000,
        "p99": percentile(latencies, 99) * 1000,
    }


async def _search(clients: dict[str, AsyncMemoryClient], count: int) -> list[float]:
    rng = random.Random(5)
    queries = [q[:80] for q in rng.sample(locomo_turns(), count)]
    names = list(clients)
    for name in names:  # open each searcher (index check, query embedder) before the clock
        await clients[name].search("warm up", top_k=5)
    latencies: list[float] = []
    slots = asyncio.Semaphore(CONCURRENT_SEARCHES)

    async def one(n: int, query: str) -> None:
        async with slots:
            started = time.perf_counter()
            await clients[names[n % len(names)]].search(query, top_k=5)
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(one(n, q) for n, q in enumerate(queries)))
    return latencies


async def capacity(url: str, count: int) -> dict[str, float]:
    """``used_memory`` per memory as workers store them, both vectors indexed."""
    settings = _settings(url).model_copy(update={"contextual_embedder": "minilm"})
    keys = Keys(settings.key_prefix, "cap")
    redis = Redis.from_url(url)
    try:
        embedder = make_embedder("local")
        info = await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).ensure(embedder, contextual_from_settings(settings))
        before = int((await redis.info("memory"))["used_memory"])
        await ingest(redis, keys, info, embedder, count, LocomoCorpus().text)
        after = int((await redis.info("memory"))["used_memory"])
        ft = await redis.ft(info.name).info()
    finally:
        await redis.aclose()
    per = (after - before) / count
    return {
        "bytes": per,
        "per_gb": 2**30 / per,
        "vectors_mb": float(ft.get("vector_index_sz_mb", 0)),
        "total_mb": (after - before) / 2**20,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--writes", type=int)
    parser.add_argument("--searches", type=int)
    parser.add_argument("--capacity", type=int)
    args = parser.parse_args()
    writes = args.writes or (3_000 if args.quick else 12_000)
    searches = args.searches or (200 if args.quick else 800)
    stored = args.capacity or (5_000 if args.quick else 50_000)
    texts = e2e_texts(writes)
    rows = []
    with embedded_redis() as url:
        rows.append(("one server", await run_setup(url, 0, texts, searches)))
        cap = await capacity(url, stored)
    for shards in (1, 2, 3):
        with tempfile.TemporaryDirectory(prefix="hs-cluster-") as tmp:
            cluster = LocalCluster(Path(tmp), get_profile("ephemeral"), masters=shards, port=0)
            state = cluster.start()
            try:
                row = await run_setup(state.url, shards, texts, searches)
                rows.append((f"cluster, {shards} shard{'s' if shards > 1 else ''}", row))
            finally:
                cluster.stop()
    print(f"\n## {writes:,} writes over {NAMESPACES} namespaces, {WORKERS} workers")
    print(f"(then {searches} hybrid searches, {CONCURRENT_SEARCHES} at a time)")
    print("| setup | memories/s | vs one server | hybrid p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    base = rows[0][1]["rate"]
    for name, row in rows:
        print(
            f"| {name} | {row['rate']:,.0f} | {row['rate'] / base:.0%} | "
            f"{row['p50']:.1f} | {row['p99']:.1f} |"
        )
    print(
        f"\n## Capacity: {stored:,} memories on one server: {cap['total_mb']:,.0f} MB "
        f"({cap['bytes']:,.0f} bytes each, of which vector indexes {cap['vectors_mb']:,.0f} MB): "
        f"{cap['per_gb']:,.0f} memories per GB of used_memory"
    )


if __name__ == "__main__":
    asyncio.run(main())
