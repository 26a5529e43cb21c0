"""Ingest: the write path against raw XADD, indexing end to end against raw HSETs, index lag.

1. Write throughput, one asyncio client: ``write()`` against raw redis-py ``XADD``s of the
   same msgpack payloads, ``write_many(500)`` against pipelined ``XADD``s (500 a round
   trip). The four run in turn, three rounds, each keeping its best round.
2. End to end: ``--writes`` LoCoMo-derived turns written first, then drained by 1, then 2
   ``hindsight-redis worker --burst`` processes running the default pipeline (rules, write
   score, summarizer, embedder, dedup, commit; the clock starts at the first processed
   write), against the ceiling: the same documents, prepared beforehand, written with
   pipelined ``HSET``s straight into an index like the workers' (what Redis alone takes to
   index them); and the embedder alone, in the worker's batch size.
   Then the same writes from 2 client processes (``write_many`` of 100) while 2 running
   workers drain them (``concurrent_drain_ratio``).
3. Index lag: ``indexed_at - created_at`` per memory at a steady rate of ``write()`` calls,
   2 workers (long-running: refining beside), twice: the same LoCoMo-derived writes as the
   drain, in a shuffled order, at half the rate 2 workers drained them (``lag_ms``); and
   writes that each become a new memory (``locomo.Sentences``: 1-3 random LoCoMo sentences,
   no near-twins to merge) at half the rate 2 workers drain those (``lag_new_ms``). A
   rate above what the workers take for that kind of write measures a queue, not a lag
   (the derived writes merge half their number: unique ones cost the workers twice as much).
4. Where the time goes: one ingest-only worker in this process over a quarter of the
   writes, each stage timed by wall and CPU clocks, Redis's own CPU beside it
   (``ingest_profile``).
5. Refine shares: the 2-worker drain again with each ``--shares`` value of ``refine_share``
   (the share of a worker's time given to refining while writes wait; 0 refines only once
   the workers caught up, as before issue 32), the shares alternating over two rounds.
6. Bytes per memory (``footprint``): the held-out LoCoMo turns written with the filters off
   and drained, every key of the namespace counted, right after and at steady state.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from typing import Any

from redis.asyncio import Redis

from benchmarks import footprint, ingest_profile, locomo
from benchmarks.harness import (
    DirectIndex,
    bench_settings,
    concurrent_drain,
    drain,
    embedded_redis,
    index_lag,
)
from benchmarks.measure import ratio
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.codec import EVENT_FIELD, encode_event
from hindsight_redis.core.requests import parse_write
from hindsight_redis.providers.embedders import embedder_from_settings

SUMMARY = "write() vs raw XADD; memories/s indexed by 1 and 2 workers vs raw HSET; index lag"
BATCH = 500


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embedder", default="local", help="the workers' (default: local)")
    parser.add_argument("--writes", type=int, help="end to end (default 20,000; quick 2,000)")
    parser.add_argument(
        "--shares", default="0,0.1", help="refine_share values drained beside each other"
    )


async def write_throughput(
    url: str, texts: list[str], n_single: int, n_batch: int, rounds: int = 3
) -> dict[str, float]:
    """Writes/s of raw XADD (single, pipelined) and of write() / write_many(), each its best
    of ``rounds`` rounds run in turn (on a shared host that compares like with like)."""
    raw = Redis.from_url(url)
    payloads = [
        encode_event(
            parse_write(
                {"content": t}, namespace="bench", max_content_chars=32_000, max_tags=32
            ).event
        )
        for t in texts
    ]
    stream = f"raw-{time.time_ns()}"

    async def raw_single() -> None:
        for n in range(n_single):
            await raw.xadd(stream, {EVENT_FIELD: payloads[n % len(payloads)]})

    async def raw_pipelined() -> None:
        for first in range(0, n_batch, BATCH):
            pipe = raw.pipeline(transaction=False)
            for n in range(first, min(first + BATCH, n_batch)):
                pipe.xadd(stream, {EVENT_FIELD: payloads[n % len(payloads)]})
            await pipe.execute()

    async def single() -> None:
        for n in range(n_single):
            await client.write(texts[n % len(texts)])

    async def batched() -> None:
        for first in range(0, n_batch, BATCH):
            end = min(first + BATCH, n_batch)
            await client.write_many([{"content": texts[n % len(texts)]} for n in range(first, end)])

    out: dict[str, float] = {}
    async with AsyncMemoryClient(bench_settings(url, embedder="hash")) as client:
        runs = [
            ("raw_xadd", raw_single, n_single),
            ("write", single, n_single),
            ("raw_xadd_pipelined", raw_pipelined, n_batch),
            ("write_many", batched, n_batch),
        ]
        for _ in range(rounds):
            for name, run_one, count in runs:
                start = time.perf_counter()
                await run_one()
                out[name] = max(out.get(name, 0.0), count / (time.perf_counter() - start))
    await raw.aclose()
    out["write_vs_raw"] = ratio(out["write"], out["raw_xadd"])
    out["write_many_vs_raw"] = ratio(out["write_many"], out["raw_xadd_pipelined"])
    return out


async def end_to_end(
    url: str, texts: list[str], embedder: str, workers: int, **settings_: Any
) -> dict[str, float]:
    """Memories/s of ``workers`` worker processes draining ``texts``, and the outcomes."""
    settings = bench_settings(url, embedder=embedder, **settings_)
    async with AsyncMemoryClient(settings) as client:
        for first in range(0, len(texts), BATCH):
            await client.write_many([{"content": t} for t in texts[first : first + BATCH]])
        run = await drain(client.redis, settings, [settings.namespace], len(texts), workers)
        stats = await client.stats()
    return run | {
        "indexed": stats["indexed"],
        "merged": stats["merged"],
        "dropped": stats["dropped"]["total"],
    }


async def raw_index_rate(url: str, texts: list[str], embedder: str) -> float:
    """Memories/s of pipelined ``HSET``s (500 a round trip) of the same documents, prepared
    beforehand, straight into an index like the workers': the ceiling."""
    redis = Redis.from_url(url)
    index = await DirectIndex.open(redis, bench_settings(url, embedder=embedder))
    now = time.time()
    docs = await index.documents(
        [{"event_id": f"m{n}", "content": t, "created_at": now} for n, t in enumerate(texts)]
    )
    start = time.perf_counter()
    for first in range(0, len(docs), BATCH):
        pipe = redis.pipeline(transaction=False)
        for key, fields in docs[first : first + BATCH]:
            pipe.hset(key, mapping=fields)
        await pipe.execute()
    rate = len(docs) / (time.perf_counter() - start)
    await redis.aclose()
    return rate


async def lag_at_half(
    url: str, texts: list[str], drain_rate: float, seconds: float, embedder: str, role: str = "all"
) -> dict[str, float]:
    """Index lag of ``texts`` written at half ``drain_rate`` (50-2,000/s), 2 workers of
    ``role``."""
    rate = max(50.0, min(drain_rate * 0.5, 2_000.0))
    settings = bench_settings(url, embedder=embedder)
    return await index_lag(settings, [settings.namespace], texts, rate, seconds, role)


async def embedder_alone(texts: list[str], name: str) -> float:
    """Texts/s of the embedder itself, in the worker's batch size, one process."""
    settings = Settings(embedder=name)
    embedder, batch = embedder_from_settings(settings.embedding), settings.worker.worker_batch_size
    await embedder.embed(texts[:batch])  # loads the model
    start = time.perf_counter()
    for first in range(0, len(texts), batch):
        await embedder.embed(texts[first : first + batch])
    return len(texts) / (time.perf_counter() - start)


def report(figures: dict[str, Any], embedder: str) -> None:
    """The tables, in markdown."""
    w, e2e, lag = figures["write"], figures["end_to_end"], figures["index_lag"]
    print("\n## Write throughput (writes/s, one asyncio client)\n")
    print("| path | writes/s | vs raw |\n|---|---:|---:|")
    print(f"| raw XADD | {w['raw_xadd']:,.0f} | |")
    print(f"| write() | {w['write']:,.0f} | {w['write_vs_raw']:.0%} |")
    print(f"| raw XADD, pipelined 500 | {w['raw_xadd_pipelined']:,.0f} | |")
    print(f"| write_many(500) | {w['write_many']:,.0f} | {w['write_many_vs_raw']:.0%} |")
    print(f"\n## End to end ({e2e['writes']:,} LoCoMo-derived writes, embedder {embedder!r})\n")
    print("| setup | memories/s | vs raw HSET + HNSW |\n|---|---:|---:|")
    print(f"| embedder alone (1 process) | {e2e['embedder_alone']:,.0f} | |")
    print(f"| raw HSET + HNSW insert (pipelined 500) | {e2e['raw_hset']:,.0f} | 100% |")
    for name in ("1_worker", "2_workers"):
        rate = e2e[name]["rate"]
        print(f"| {name.replace('_', ' ')} | {rate:,.0f} | {ratio(rate, e2e['raw_hset']):.0%} |")
    c = figures["concurrent"]
    print(
        f"| 2 workers, {c['clients']} client processes writing meanwhile "
        f"({c['write_rate']:,.0f} writes/s) | {c['rate']:,.0f} | "
        f"{figures['concurrent_drain_ratio']:.0%} |"
    )
    two = e2e["2_workers"]
    print(
        f"outcomes (2 workers): indexed {two['indexed']:,}, merged {two['merged']:,}, "
        f"dropped {two['dropped']:,}"
    )
    first = next(iter(e2e["shares"].values()))
    print("\n| refine_share | 2 workers, memories/s (best of 2) | vs the first |")
    print("|---:|---:|---:|")
    for share, rate in e2e["shares"].items():
        print(f"| {share} | {rate:,.0f} | {ratio(rate, first):.0%} |")
    new = figures["index_lag_new"]
    print("\n## Index lag, 2 workers, at half the rate they drain each kind of write\n")
    print("| writes | drained/s | written/s | memories | p50 ms | p90 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row, drained in (
        ("the drain's (LoCoMo-derived, shuffled)", lag, e2e["2_workers"]["rate"]),
        (
            "the same, workers of role ingest (the refiner elsewhere)",
            figures["index_lag_ingest_role"],
            e2e["2_workers"]["rate"],
        ),
        ("each a new memory (LoCoMo sentences)", new, new["drain"]["rate"]),
    ):
        print(
            f"| {name} | {drained:,.0f} | {row['rate']:,.0f} | {row['memories']:,} | "
            f"{row['p50_ms']:.0f} | {row['p90_ms']:.0f} | {row['p99_ms']:.0f} |"
        )
    ingest_profile.report(figures["profile"])
    footprint.report(figures["bytes_per_memory"])


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    n_single, n_batch = (1_000, 10_000) if args.quick else (10_000, 100_000)
    count = args.writes or (2_000 if args.quick else 20_000)
    base, texts = locomo.texts(), locomo.derived_texts(count)
    with embedded_redis() as url:
        writes = await write_throughput(url, base, n_single, n_batch)
        e2e: dict[str, Any] = {
            "writes": count,
            "embedder_alone": await embedder_alone(texts, args.embedder),
            "raw_hset": await raw_index_rate(url, texts, args.embedder),
            "1_worker": await end_to_end(url, texts, args.embedder, 1),
            "2_workers": await end_to_end(url, texts, args.embedder, 2),
        }
        e2e["2_workers_vs_raw_hset"] = ratio(e2e["2_workers"]["rate"], e2e["raw_hset"])
        concurrent = await concurrent_drain(bench_settings(url, embedder=args.embedder), texts)
        profile = await ingest_profile.profile(url, texts[: count // 4], args.embedder)
        shares = [float(s) for s in args.shares.split(",")]
        drains: dict[str, list[float]] = {f"{s:g}": [] for s in shares}
        for _ in range(2):
            for share in shares:
                run = await end_to_end(url, texts, args.embedder, 2, refine_share=share)
                drains[f"{share:g}"].append(run["rate"])
        e2e["shares"] = {share: max(rates) for share, rates in drains.items()}
        seconds = 3.0 if args.quick else 10.0
        # Enough for 2,000/s over the seconds (a quick run drains fewer).
        more = locomo.derived_texts(max(count, 20_000))
        shuffled = random.Random(0).sample(more, len(more))
        lag = await lag_at_half(url, shuffled, e2e["2_workers"]["rate"], seconds, args.embedder)
        # The same with the refiner elsewhere (`worker --role ingest` here): what the
        # contextual refiner's CPU costs the lag on these cores.
        lag_ingest = await lag_at_half(
            url, shuffled, e2e["2_workers"]["rate"], seconds, args.embedder, role="ingest"
        )
        sentences, rng = locomo.Sentences(), random.Random(1)
        new = [sentences.text(rng) for _ in range(20_000)]
        new_drain = await end_to_end(url, new[: count // 2], args.embedder, 2)
        lag_new = await lag_at_half(url, new, new_drain["rate"], seconds, args.embedder)
    # A Redis of its own: the earlier phases' keys expire (content claims) and their
    # indexes collect while it measures, which would count against its growth.
    limit = 300 if args.quick else None  # quick: a pool of 300 pays for its blocks
    with embedded_redis() as url:
        footprint_ = await footprint.bytes_per_memory(url, args.embedder, limit)
    return {
        "drain_per_s": e2e["2_workers"]["rate"],
        "ceiling_per_s": e2e["raw_hset"],
        "drain_ratio": e2e["2_workers_vs_raw_hset"],
        "concurrent_drain_per_s": concurrent["rate"],
        "concurrent_drain_ratio": ratio(concurrent["rate"], e2e["raw_hset"]),
        "lag_ms": {p: lag[f"{p}_ms"] for p in ("p50", "p90", "p99")},
        "lag_ingest_role_ms": {p: lag_ingest[f"{p}_ms"] for p in ("p50", "p90", "p99")},
        "new_drain_per_s": new_drain["rate"],
        "lag_new_ms": {p: lag_new[f"{p}_ms"] for p in ("p50", "p90", "p99")},
        "write": writes,
        "end_to_end": e2e,
        "concurrent": concurrent,
        "index_lag": lag,
        "index_lag_ingest_role": lag_ingest,
        "index_lag_new": lag_new | {"drain": new_drain},
        "profile": profile,
        "bytes_per_memory": footprint_,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures = asyncio.run(measure(args))
    report(figures, args.embedder)
    return figures
