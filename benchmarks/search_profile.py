"""Where a hybrid search spends its time: per stage, per leg on the server, and the ceiling.

The 5 LoCoMo dev conversations are indexed as ``locomo_recall.py --direct``
does (every turn, real contextual vectors from the refiner), then the
held-out questions (conversations 3-4) are searched in hybrid mode, top 10,
scoped to their conversation (``session_id``) as the recall benchmark does.

Printed:
- stage timings (median and p99, milliseconds) measured by wrapping the
  searcher's steps: static and contextual query embedding, the first legs'
  pipelined round trip, the contextual KNN, scores, fusion, hit fields, and
  the rest (Python between the steps); the contextual embedding alone
  (sequential, same queries) beside its time inside searches shows what
  running it next to the legs costs (CPU and GIL contention);
- each leg's query alone with precomputed vectors: its server time
  (``INFO commandstats``) and its bare ``FT.SEARCH`` round trip, the ceiling;
- the top functions of ``cProfile`` over the searches.

Run:  python benchmarks/search_profile.py [--queries 400] [--contextual-threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import redis.asyncio.client as redis_client
from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_recall import held_out_questions, ingest_direct, load_turns

import hindsight_redis.searcher as searcher_module
from hindsight_redis import access
from hindsight_redis.keys import Keys
from hindsight_redis.models import SearchFilters
from hindsight_redis.providers.projection import project
from hindsight_redis.providers.vectors import vector_bytes
from hindsight_redis.query import (
    build_filter,
    keyword_command,
    keyword_query,
    keyword_terms,
    knn_command,
)
from hindsight_redis.schema import CONTEXT_FIELD
from hindsight_redis.searcher import CONTEXT_DEPTH, Searcher
from hindsight_redis.settings import Settings

from common import embedded_redis, locomo_path, percentile

Timings = dict[str, list[float]]


def _wrap(
    timings: Timings, name: str, fn: Callable[..., Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    async def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            timings[name].append((time.perf_counter() - t0) * 1000)

    return timed


def _wrap_sync(timings: Timings, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            timings[name].append((time.perf_counter() - t0) * 1000)

    return timed


def instrument(searcher: Searcher, timings: Timings) -> None:
    """Time each step of ``searcher.search`` into ``timings`` (by step name)."""
    searcher.embedder.embed = _wrap(timings, "static query embedding", searcher.embedder.embed)  # type: ignore[method-assign]
    if searcher.contextual is not None:
        ctx = searcher.contextual
        ctx.embed = _wrap(timings, "contextual query embedding (thread)", ctx.embed)  # type: ignore[method-assign]
    searcher._legs = _wrap(timings, "legs (all, until the last reply)", searcher._legs)  # type: ignore[method-assign]
    searcher._context_query = _wrap(  # type: ignore[method-assign]
        timings, "waiting for the contextual query vector", searcher._context_query
    )
    searcher._contextual_rows = _wrap(  # type: ignore[method-assign]
        timings, "contextual leg after the first legs (wait + KNN)", searcher._contextual_rows
    )
    searcher._scores = _wrap_sync(timings, "scores from rows", searcher._scores)  # type: ignore[method-assign]
    searcher._hits = _wrap_sync(timings, "hits from rows", searcher._hits)  # type: ignore[method-assign]
    access.scripts.count_hits = _wrap(  # type: ignore[attr-defined]
        timings, "access counts, one script call per 0.1 s (background)",
        access.scripts.count_hits,
    )  # fmt: skip
    searcher_module.fuse = _wrap_sync(timings, "fusion", searcher_module.fuse)  # type: ignore[attr-defined]
    execute = redis_client.Pipeline.execute

    async def pipe_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        legs = any(c[0][0] == "FT.SEARCH" for c in self.command_stack)
        name = "the first legs' pipeline round trip" if legs else "other pipelines"
        t0 = time.perf_counter()
        try:
            return await execute(self, *args, **kwargs)
        finally:
            timings[name].append((time.perf_counter() - t0) * 1000)

    redis_client.Pipeline.execute = pipe_execute  # type: ignore[method-assign]


async def ceiling(
    redis: Redis, searcher: Searcher, questions: list[tuple[str, str]]
) -> dict[str, tuple[float, list[float]]]:
    """Per leg, with precomputed vectors: (server ms per call from ``INFO commandstats``,
    the bare ``FT.SEARCH`` round trips)."""
    info, settings = searcher.info, searcher.settings
    assert searcher.contextual is not None
    texts = [q for q, _ in questions]
    static = await searcher.embedder.embed(texts)
    # as the index stores them (projected on its basis)
    contextual = project(await searcher.contextual.embed(texts), info.context_projection)
    depth = settings.search_candidates
    commands: dict[str, list[list[Any]]] = defaultdict(list)
    for (question, conv), vec, cvec in zip(questions, static, contextual, strict=True):
        expr = build_filter(searcher.keys.namespace, SearchFilters(session_id=conv))
        commands["static KNN"].append(
            knn_command(
                info.alias,
                info.vector_field,
                expr,
                vector_bytes(vec, info.datatype),
                depth,
                settings.hnsw_ef_runtime,
                also=(CONTEXT_FIELD,),
            )
        )
        commands["BM25"].append(
            keyword_command(
                info.alias,
                keyword_query(keyword_terms(question), expr) or "",
                depth,
                (info.vector_field, CONTEXT_FIELD),
            )
        )
        commands["contextual KNN"].append(knn_command(
            info.alias, CONTEXT_FIELD, expr, vector_bytes(cvec, info.context_datatype),
            CONTEXT_DEPTH, settings.hnsw_ef_runtime, also=(info.vector_field,)))  # fmt: skip
    out: dict[str, tuple[float, list[float]]] = {}
    for name, leg in commands.items():
        before = await _search_usec(redis)
        rtt = []
        for command in leg:
            t0 = time.perf_counter()
            await redis.execute_command(*command)
            rtt.append((time.perf_counter() - t0) * 1000)
        usec, calls = (a - b for a, b in zip(await _search_usec(redis), before, strict=True))
        out[name] = (usec / 1000 / max(calls, 1), rtt)
    return out


async def _search_usec(redis: Redis) -> tuple[float, float]:
    """Total server microseconds and calls of FT.SEARCH so far."""
    stats = await redis.info("commandstats")
    entry = stats.get("cmdstat_FT.SEARCH") or stats.get("cmdstat_ft.search") or {}
    return float(entry.get("usec", 0)), float(entry.get("calls", 0))


def _row(name: str, values: list[float]) -> str:
    p50, p99 = percentile(values, 50), percentile(values, 99)
    return f"| {name} | {p50:.2f} | {p99:.2f} | {len(values)} |"


async def run(url: str, args: argparse.Namespace) -> None:
    """Ingest, time, profile; print the tables."""
    data = json.loads(locomo_path().read_text())
    settings = Settings(
        redis_url=url, key_prefix=f"prof{uuid.uuid4().hex[:6]}", namespace="locomo",
        profile="ephemeral", max_backlog=1_000_000, contextual_threads=args.contextual_threads,
    )  # fmt: skip
    started = time.perf_counter()
    await ingest_direct(settings, load_turns(data))
    print(f"indexed in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    questions = held_out_questions(data)[: args.queries]
    redis = Redis.from_url(url)
    keys = Keys(settings.key_prefix, settings.namespace)
    try:
        searcher = await Searcher.open(redis, keys, settings)

        async def search(question: str, conv: str) -> Any:
            return await searcher.search(question, top_k=10, filters=SearchFilters(session_id=conv))

        for question, conv in questions[:30]:  # warm-up: models loaded, pools filled
            await search(question, conv)
        assert searcher.contextual is not None
        alone = []
        for question, _ in questions:
            t0 = time.perf_counter()
            await searcher.contextual.embed([question + " "])  # not cached
            alone.append((time.perf_counter() - t0) * 1000)
        totals: list[float] = []
        timings: Timings = defaultdict(list)
        instrument(searcher, timings)
        for question, conv in questions:
            t0 = time.perf_counter()
            await search(question, conv)
            totals.append((time.perf_counter() - t0) * 1000)
        print("\n| stage (hybrid, top 10, held-out LoCoMo) | p50 ms | p99 ms | calls |")
        print("|---|---:|---:|---:|")
        print(_row("**whole search**", totals))
        for name, values in timings.items():
            print(_row(name, values))
        print(_row("contextual query embedding, alone (sequential)", alone))
        print(
            "\n| leg alone (precomputed vectors) | server ms per call (mean) "
            "| bare round trip p50 / p99 ms |"
        )
        print("|---|---:|---:|")
        for name, (server, rtt) in (await ceiling(redis, searcher, questions)).items():
            print(f"| {name} | {server:.2f} | {percentile(rtt, 50):.2f} / "
                  f"{percentile(rtt, 99):.2f} |")  # fmt: skip
        profiler = cProfile.Profile()
        profiler.enable()
        for question, conv in questions:
            await search(question + "?", conv)
        profiler.disable()
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(args.top)
        print("\ncProfile, main thread, by own time:\n" + stream.getvalue())
        await searcher.aclose()  # the hit counts still waiting for their window
    finally:
        await redis.aclose()


def main() -> None:
    """Parse arguments, start a throwaway embedded Redis, print the breakdown."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--contextual-threads", type=int, default=Settings().contextual_threads)
    parser.add_argument("--top", type=int, default=18, help="cProfile rows")
    args = parser.parse_args()
    with embedded_redis() as url:
        asyncio.run(run(url, args))


if __name__ == "__main__":
    main()
