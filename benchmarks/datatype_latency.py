"""Search latency of a float32 index against a float16 one, paired on one server.

Two namespaces of the same N memories (``search_latency.LocomoCorpus``, its
stand-in contextual vectors) on one embedded Redis, one stored as float32
(hashtable hashes: the old layout), one as float16 (listpack hashes); each
query is asked of both, in alternating order, so load on the machine hits
both alike. Prints p50 / p90 / p99 / mean per mode and datatype (ms).

Run:  python benchmarks/datatype_latency.py [--size 10000] [--queries 800]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redis.asyncio import Redis

from hindsight_redis.index import MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import SearchFilters
from hindsight_redis.providers.embedders import (
    CachedEmbedder,
    contextual_from_settings,
    make_embedder,
)
from hindsight_redis.searcher import Searcher
from hindsight_redis.settings import Settings

from common import embedded_redis
from search_latency import LocomoCorpus, ingest


async def run(url: str, size: int, n_queries: int) -> None:
    """Build both namespaces, then time each mode on both, query by query."""
    redis = Redis.from_url(url)
    corpus = LocomoCorpus()
    embedder = CachedEmbedder(make_embedder("local"))
    searchers: dict[str, Searcher] = {}
    for datatype in ("float32", "float16"):
        settings = Settings(
            redis_url=url, key_prefix=f"dt{uuid.uuid4().hex[:6]}", namespace="bench",
            vector_datatype=datatype,
        )  # fmt: skip
        keys = Keys(settings.key_prefix, settings.namespace)
        contextual = contextual_from_settings(settings)
        info = await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).ensure(embedder, contextual)
        await ingest(redis, keys, info, embedder, size, corpus.text)
        cached = CachedEmbedder(contextual) if contextual is not None else None
        searchers[datatype] = Searcher(redis, keys, settings, embedder, info, cached)
    rng = random.Random(5)
    queries = [corpus.query(rng) for _ in range(n_queries)]
    print("| mode | datatype | p50 | p90 | p99 | mean |\n|---|---|---:|---:|---:|---:|")
    for mode in ("vector", "keyword", "hybrid"):
        times: dict[str, list[float]] = {d: [] for d in searchers}
        for n, query in enumerate([*queries[:20], *queries]):
            pairs = list(searchers.items())
            for datatype, searcher in pairs if n % 2 else reversed(pairs):
                started = time.perf_counter()
                await searcher.search(query, top_k=5, mode=mode, filters=SearchFilters())  # type: ignore[arg-type]
                if n >= 20:  # after the warm-up
                    times[datatype].append((time.perf_counter() - started) * 1000)
        for datatype, ms in times.items():
            q = statistics.quantiles(ms, n=100, method="inclusive")
            print(f"| {mode} | {datatype} | {q[49]:.2f} | {q[89]:.2f} | {q[98]:.2f} | "
                  f"{statistics.fmean(ms):.2f} |")  # fmt: skip
    await redis.aclose()


def main() -> None:
    """Parse arguments, start a throwaway embedded Redis, run."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=800)
    args = parser.parse_args()
    with embedded_redis() as url:
        asyncio.run(run(url, args.size, args.queries))


if __name__ == "__main__":
    main()
