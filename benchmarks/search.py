"""Search latency at 10,000 and 100,000 memories, per mode, against bare queries on the index.

Memories are embedded and written straight into the index (``harness.DirectIndex``), then
each mode of the searcher (query embedding included, ``top_k`` 5, default filters) is timed
beside two baselines on the same index in the same run: a bare redisvl ``VectorQuery`` (same
query embedding step), and the ceiling, hybrid's legs alone (static KNN, BM25 as the
searcher sends it, contextual KNN) with precomputed vectors in one pipeline.

Corpora: ``templates`` (7 patterns filled with names, services and numbers: every content
word is in 10-30% of the memories, the worst case for BM25) and ``locomo`` (1-3 sentences of
LoCoMo turns per memory, LoCoMo's questions as queries: a natural vocabulary). Hybrid runs as
a client runs it, with the contextual leg; the corpus's contextual vectors are stand-ins (the
static vector zero-padded: same field, graph and sizes; embedding 100,000 texts with MiniLM
takes 10-20 minutes on 2 cores), the query side is the real model.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redisvl.index import AsyncSearchIndex
from redisvl.query import VectorQuery

from benchmarks import locomo
from benchmarks.harness import DirectIndex, embedded_redis
from benchmarks.measure import MODES, Mode, p50_p99, ratio, timed
from hindsight_redis import SearchFilters, Settings
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.vectors import vector_bytes
from hindsight_redis.index.schema import index_schema
from hindsight_redis.providers.embedders import (
    CachedEmbedder,
    Embedder,
    contextual_from_settings,
    make_embedder,
)
from hindsight_redis.providers.projection import project
from hindsight_redis.search.query import keyword_command, keyword_query, keyword_terms, knn_command
from hindsight_redis.search.searcher import Searcher

SUMMARY = "hybrid / vector / keyword p50, p99 at 10k-100k memories vs bare KNN and the legs alone"
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
SERVICES = ["billing-service-v2", "auth-gateway", "search-api", "payments", "ingest-worker"]
ERRORS = ["ERR_CONN_RESET", "ETIMEDOUT", "OOMKilled", "HTTP 503", "deadlock detected"]
TEMPLATES = [
    "{n} prefers {x} answers and wants summaries under {k} words",
    "Deploy of {s} failed with {e} after {k} retries on node {k2}",
    "{n} asked to schedule the {x} review with the {s} team on day {k}",
    "Ticket {k}-{k2}: {s} latency rose to {k} ms during the {x} migration",
    "用户 {n} 希望用中文回答关于 {s} 的问题，第 {k} 次提到",
    "Remember that {n} is allergic to {x}; order lunch accordingly",
    "The {s} config sets max_connections={k} and timeout={k2}s",
]
TOPICS = ["python", "rust", "budget", "security", "onboarding", "peanuts", "kubernetes", "pricing"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", help="memories, comma-separated (default 10000,100000)")
    parser.add_argument("--corpus", choices=["templates", "locomo"], default="templates")
    parser.add_argument("--queries", type=int, help="per mode (default 300; quick 50)")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--no-contextual", action="store_true", help="hybrid without MiniLM")


def synth(rng: random.Random) -> str:
    """One memory of the templates."""
    return rng.choice(TEMPLATES).format(
        n=rng.choice(NAMES),
        x=rng.choice(TOPICS),
        s=rng.choice(SERVICES),
        e=rng.choice(ERRORS),
        k=rng.randint(1, 999),
        k2=rng.randint(1, 99),
    )


def corpus(name: str) -> tuple[Callable[[random.Random], str], Callable[[random.Random], str]]:
    """How to make a memory and a query of the corpus ``name``."""
    if name == "locomo":
        sentences = locomo.Sentences()
        return sentences.text, sentences.query
    return synth, lambda rng: synth(rng)[: rng.randint(20, 60)]


async def populate(index: DirectIndex, n: int, make: Callable[[random.Random], str]) -> None:
    """``n`` memories of ``make``, agents at random, ages over 90 days."""
    rng, now = random.Random(7), time.time()
    await index.add(
        [
            {
                "event_id": f"m{i}",
                "content": make(rng),
                "agent_id": rng.choice(NAMES),
                "created_at": now - rng.random() * 86_400 * 90,
            }
            for i in range(n)
        ],
        context="stand-in",
    )


async def bare_legs(
    index: DirectIndex,
    contextual: Embedder | None,
    queries: list[str],
    common: Callable[[list[str]], set[str]],
) -> list[float]:
    """Milliseconds of hybrid's legs alone: the static KNN, BM25 over the query's terms (the
    rarest select, ``common`` ones only score, as the searcher sends it) and the contextual
    KNN, with precomputed vectors, in one pipeline."""
    info, settings, redis = index.info, index.settings, index.redis
    static = await index.embedder.embed(queries)
    ctx = None
    if contextual is not None and info.has_context:  # as the index stores them (projected)
        ctx = project(await contextual.embed(queries), info.context_projection)
    depth = settings.search_candidates
    times = []
    for n, query in enumerate(queries):
        t0 = time.perf_counter()
        async with redis.pipeline(transaction=False) as pipe:
            pipe.execute_command(
                *knn_command(
                    info.alias,
                    info.vector_field,
                    None,
                    vector_bytes(static[n], info.datatype),
                    depth,
                    settings.hnsw_ef_runtime,
                )
            )
            terms = keyword_terms(query)
            kw = keyword_query(terms, None, common=common(terms))
            if kw is not None:
                pipe.execute_command(*keyword_command(info.alias, kw, depth))
            if ctx is not None:
                pipe.execute_command(
                    *knn_command(
                        info.alias,
                        CONTEXT_FIELD,
                        None,
                        vector_bytes(ctx[n], info.context_datatype),
                        20,
                        settings.hnsw_ef_runtime,
                    )
                )
            await pipe.execute()
        times.append((time.perf_counter() - t0) * 1000)
    return times


async def at_size(
    url: str, embedder: Embedder, contextual: Embedder | None, n: int, args: argparse.Namespace
) -> dict[str, Any]:
    """p50 / p99 ms of each mode and of both baselines at ``n`` memories."""
    settings = Settings(redis_url=url, key_prefix=f"lat{uuid.uuid4().hex[:6]}", namespace="bench")
    redis = Redis.from_url(url)
    try:
        index = await DirectIndex.open(redis, settings, embedder)
        t0 = time.perf_counter()
        make, ask = corpus(args.corpus)
        await populate(index, n, make)
        print(f"{n:,} memories indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        rng, info = random.Random(11), index.info
        queries = [ask(rng) for _ in range(args.queries)]
        bare = AsyncSearchIndex(
            index_schema(
                index.keys, generation=info.generation, dims=info.dims, datatype=info.datatype
            ),
            redis_client=redis,
        )

        async def bare_query(query: str) -> object:
            vector = (await embedder.embed([query]))[0]
            return await bare.query(
                VectorQuery(
                    vector.tolist(),
                    info.vector_field,
                    return_fields=["content"],
                    num_results=5,
                    dtype=info.datatype,
                )
            )

        searcher = Searcher(redis, index.keys, settings, embedder, info, contextual)
        rows: dict[str, Any] = {"bare_vector": p50_p99(await timed(bare_query, queries))}
        for mode in MODES:

            async def search(query: str, mode: Mode = mode) -> object:
                return await searcher.search(
                    query, top_k=5, mode=mode, filters=SearchFilters(), record_access=True
                )

            rows[mode] = p50_p99(await timed(search, queries))
        common = searcher.term_stats.common  # the keyword leg's query as the searcher sends it
        rows["ceiling"] = p50_p99(await bare_legs(index, contextual, queries, common))
        await searcher.aclose()
        rows["hybrid_vs_ceiling"] = ratio(rows["hybrid"]["p50"], rows["ceiling"]["p50"])
        rows["hybrid_vs_bare_vector"] = ratio(rows["hybrid"]["p50"], rows["bare_vector"]["p50"])
        return rows
    finally:
        await redis.aclose()


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.queries = args.queries or (50 if args.quick else 300)
    sizes = [int(s) for s in (args.sizes or ("2000" if args.quick else "10000,100000")).split(",")]
    contextual = None
    if not args.no_contextual:
        minilm = contextual_from_settings(Settings(), for_queries=True)  # as searches run it
        assert minilm is not None
        contextual = CachedEmbedder(minilm)
        asyncio.run(contextual.embed(["probe"]))  # loads the model before the clock
    embedder = make_embedder(args.embedder)
    asyncio.run(embedder.embed(["probe"]))

    async def every_size(url: str) -> dict[str, Any]:
        return {str(n): await at_size(url, embedder, contextual, n, args) for n in sizes}

    with embedded_redis() as url:
        figures = asyncio.run(every_size(url))
    print(
        f"\nembedder {embedder.model_id}, contextual "
        f"{contextual.model_id if contextual else 'none'}, corpus {args.corpus}"
    )
    print(
        "\n| memories | bare vector | vector | keyword | **hybrid** | ceiling | hybrid / ceiling |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, rows in figures.items():
        cells = [
            f"{rows[k]['p50']:.2f} / {rows[k]['p99']:.2f}"
            for k in ("bare_vector", *MODES, "ceiling")
        ]
        print(f"| {int(n):,} | " + " | ".join(cells) + f" | {rows['hybrid_vs_ceiling']:.2f} |")
    print("(p50 / p99 ms)")
    return {"corpus": args.corpus, "sizes": figures}
