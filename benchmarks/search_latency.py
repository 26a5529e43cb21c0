"""Search latency at 10k (and optionally 100k) memories, per mode, vs bare redisvl.

Synthetic agent memories (templates filled with names, services, numbers and
identifiers, some Chinese) are embedded in batches and HSET as documents;
then each mode of ``Searcher.search`` (query embedding included, top_k=5,
filters: namespace + active + shared + one agent's session-free pool) is
timed beside a bare redisvl ``VectorQuery`` on the same index (same query
embedding step), and p50/p99 and the ratio to the bare query are printed.

Hybrid runs as a client runs it by default: with the contextual leg (MiniLM
query embedding in a thread beside the first two legs, then a KNN on the
contextual field). Embedding 100,000 texts with MiniLM takes 10-20 minutes
here, so the corpus's contextual vectors are stand-ins: each memory's static
vector zero-padded to 384 dims (same field, same HNSW, same sizes). The query
side is the real model. ``--no-contextual`` times hybrid without the leg.

Run:  python benchmarks/search_latency.py [--sizes 10000,100000] [--embedder local]
      [--queries 300] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
from redis.asyncio import Redis
from redisvl.index import AsyncSearchIndex
from redisvl.query import VectorQuery

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis.index import IndexInfo, MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent, SearchFilters
from hindsight_redis.providers.embedders import (
    CachedEmbedder,
    Embedder,
    contextual_from_settings,
    make_embedder,
)
from hindsight_redis.providers.projection import project
from hindsight_redis.providers.vectors import vector_bytes
from hindsight_redis.query import keyword_command, keyword_query, keyword_terms, knn_command
from hindsight_redis.schema import CONTEXT_FIELD, index_schema
from hindsight_redis.searcher import Searcher
from hindsight_redis.settings import Settings

from common import locomo_path, queue_memory

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


class LocomoCorpus:
    """Texts and questions with a natural vocabulary: sentences of LoCoMo turns.

    Each memory is "Speaker: " plus 1-3 sentences drawn from random turns of
    the 5 dev conversations; queries are LoCoMo's own questions. Unlike the
    templates, word frequencies follow real dialogue (long tail, few very
    common content words).
    """

    def __init__(self) -> None:
        data = json.loads(locomo_path().read_text())
        self.sentences: list[str] = []
        self.speakers: list[str] = []
        self.questions: list[str] = []
        for sample in data:
            for key, turns in sample["conversation"].items():
                if key.startswith("session_") and isinstance(turns, list):
                    for turn in turns:
                        self.speakers.append(turn["speaker"])
                        self.sentences += [s for s in _SENTENCE.split(turn["text"]) if s.strip()]
            self.questions += [q["question"] for q in sample["qa"]]

    def text(self, rng: random.Random) -> str:
        """One memory text."""
        picked = [rng.choice(self.sentences) for _ in range(rng.randint(1, 3))]
        return f"{rng.choice(self.speakers)}: {' '.join(picked)}"

    def query(self, rng: random.Random) -> str:
        """One question."""
        return rng.choice(self.questions)


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def synth(rng: random.Random) -> str:
    """One synthetic memory text."""
    return rng.choice(TEMPLATES).format(
        n=rng.choice(NAMES), x=rng.choice(TOPICS), s=rng.choice(SERVICES),
        e=rng.choice(ERRORS), k=rng.randint(1, 999), k2=rng.randint(1, 99),
    )  # fmt: skip


async def ingest(
    redis: Redis,
    keys: Keys,
    info: IndexInfo,
    embedder: Embedder,
    n: int,
    make_text: Callable[[random.Random], str] = synth,
) -> None:
    """Embed and HSET ``n`` synthetic memories in batches of 1,000 (with stand-in
    contextual vectors when the index has the field)."""
    rng = random.Random(7)
    now = time.time()
    for start in range(0, n, 1000):
        texts = [make_text(rng) for _ in range(min(1000, n - start))]
        vectors = await embedder.embed(texts)
        async with redis.pipeline(transaction=False) as pipe:
            for i, (content, vec) in enumerate(zip(texts, vectors, strict=True)):
                memory_id = f"m{start + i}"
                event = MemoryEvent(
                    event_id=memory_id, namespace=keys.namespace, content=content,
                    agent_id=rng.choice(NAMES), created_at=now - rng.random() * 86_400 * 90,
                )  # fmt: skip
                ctx = None
                if info.has_context:
                    ctx = np.zeros(info.context_dims, dtype=np.float32)
                    ctx[: min(len(vec), info.context_dims)] = vec[: info.context_dims]
                queue_memory(pipe, keys, info, event, vec, ctx)
            await pipe.execute()
    while True:
        ft = await redis.ft(info.name).info()
        if int(ft["num_docs"]) >= n and float(ft.get("percent_indexed", 1)) >= 1:
            return
        await asyncio.sleep(0.2)


async def timed(fn: Callable[[str], Awaitable[object]], queries: list[str]) -> list[float]:
    """Milliseconds per call of ``fn`` over ``queries`` (after a short warm-up)."""
    for q in queries[:20]:
        await fn(q)
    out = []
    for q in queries:
        t0 = time.perf_counter()
        await fn(q)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(values: list[float], p: float) -> float:
    """The ``p`` percentile (0..100) of ``values``."""
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]
        if p < 100
        else max(values)
    )


async def run_size(
    url: str,
    embedder: Embedder,
    n: int,
    n_queries: int,
    corpus: str = "templates",
    contextual: Embedder | None = None,
) -> list[tuple[str, float, float]]:
    """Rows (mode, p50, p99) at ``n`` memories."""
    settings = Settings(redis_url=url, key_prefix=f"lat{uuid.uuid4().hex[:6]}", namespace="bench")
    keys = Keys(settings.key_prefix, settings.namespace)
    redis = Redis.from_url(url)
    try:
        info = await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).ensure(embedder, contextual)
        t0 = time.perf_counter()
        locomo = LocomoCorpus() if corpus == "locomo" else None
        await ingest(redis, keys, info, embedder, n, locomo.text if locomo else synth)
        print(
            f"{n} memories ingested and indexed in {time.perf_counter() - t0:.1f}s", file=sys.stderr
        )
        rng = random.Random(11)
        if locomo is not None:
            queries = [locomo.query(rng) for _ in range(n_queries)]
        else:
            queries = [synth(rng)[: rng.randint(20, 60)] for _ in range(n_queries)]
        bare = AsyncSearchIndex(
            index_schema(keys, generation=info.generation, dims=info.dims, datatype=info.datatype),
            redis_client=redis,
        )

        async def bare_query(q: str) -> object:
            vec = (await embedder.embed([q]))[0]
            vq = VectorQuery(
                vec.tolist(),
                info.vector_field,
                return_fields=["content"],
                num_results=5,
                dtype=info.datatype,
            )
            return await bare.query(vq)

        rows = []
        base = pct(await timed(bare_query, queries), 50)
        rows.append(("bare redisvl VectorQuery", base, 0.0))
        searcher = Searcher(redis, keys, settings, embedder, info, contextual)
        for mode in ("vector", "keyword", "hybrid"):

            async def ours(q: str, mode: str = mode) -> object:
                return await searcher.search(
                    q, top_k=5, mode=mode, filters=SearchFilters(), record_access=True
                )

            times = await timed(ours, queries)
            rows.append((mode, pct(times, 50), pct(times, 99)))
        bare_times = await timed(bare_query, queries)
        rows[0] = ("bare redisvl VectorQuery", pct(bare_times, 50), pct(bare_times, 99))
        common = searcher.term_stats.common  # the keyword leg's query as the searcher sends it
        legs = await bare_legs(redis, info, settings, embedder, contextual, queries, common)
        await searcher.aclose()
        rows.append(("ceiling: bare legs, precomputed vectors, one pipeline", *legs))
        return rows
    finally:
        await redis.aclose()


async def bare_legs(
    redis: Redis,
    info: IndexInfo,
    settings: Settings,
    embedder: Embedder,
    contextual: Embedder | None,
    queries: list[str],
    common: Callable[[list[str]], set[str]],
) -> tuple[float, float]:
    """p50/p99 ms of hybrid's legs alone: the static KNN, BM25 over the query's terms
    (the rarest select, ``common`` ones only score, as the searcher sends it) and the
    contextual KNN, with precomputed vectors, one pipeline."""
    static = await embedder.embed(queries)
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
                pipe.execute_command(*knn_command(
                    info.alias, CONTEXT_FIELD, None, vector_bytes(ctx[n], info.context_datatype),
                    20, settings.hnsw_ef_runtime))  # fmt: skip
            await pipe.execute()
        times.append((time.perf_counter() - t0) * 1000)
    return pct(times, 50), pct(times, 99)


def main() -> None:
    """Parse arguments, start a server when none is given, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated, e.g. 10000,100000")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument(
        "--corpus",
        choices=["templates", "locomo"],
        default="templates",
        help="templates: 7 patterns, every content word very common (worst case for BM25); "
        "locomo: sentences of LoCoMo turns and LoCoMo's questions (natural vocabulary)",
    )
    parser.add_argument("--no-contextual", action="store_true", help="hybrid without MiniLM")
    args = parser.parse_args()
    contextual = None
    if not args.no_contextual:
        settings = Settings()
        minilm = contextual_from_settings(settings, for_queries=True)  # as searches run it
        assert minilm is not None
        contextual = CachedEmbedder(minilm)
        asyncio.run(contextual.embed(["probe"]))  # load the model before timing
    try:
        embedder = make_embedder(args.embedder)
        asyncio.run(embedder.embed(["probe"]))
    except Exception as e:  # the local model may not be installed yet
        print(f"embedder {args.embedder!r} unavailable ({e}); using 'hash'", file=sys.stderr)
        embedder = make_embedder("hash")
    sizes = [int(s) for s in args.sizes.split(",")]

    async def all_sizes(url: str) -> dict[int, list[tuple[str, float, float]]]:
        return {
            n: await run_size(url, embedder, n, args.queries, args.corpus, contextual)
            for n in sizes
        }

    if args.redis_url:
        results = asyncio.run(all_sizes(args.redis_url))
    else:
        from hindsight_redis.server import EmbeddedServer, get_profile

        with tempfile.TemporaryDirectory() as tmp:
            server = EmbeddedServer(Path(tmp), get_profile("ephemeral"), port=0)
            state = server.start()
            try:
                results = asyncio.run(all_sizes(state.url))
            finally:
                server.stop()
    print(
        f"embedder {embedder.model_id}, contextual "
        f"{contextual.model_id if contextual else 'none'}, corpus {args.corpus}"
    )
    for n, rows in results.items():
        base = rows[0][1]
        print(
            f"\n{n:,} memories\n\n| mode | p50 ms | p99 ms | p50 / bare |"
            "\n| --- | --- | --- | --- |"
        )
        for mode, p50, p99 in rows:
            print(f"| {mode} | {p50:.2f} | {p99:.2f} | {p50 / base:.2f} |")


if __name__ == "__main__":
    main()
