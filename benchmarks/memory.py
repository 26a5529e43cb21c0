"""Memory per memory: where the bytes of a stored memory go, hash and index, against the
layout before issue 15 (the baseline, measured beside it on the same server).

Every LoCoMo dev turn (2,760) is indexed without the worker (``harness.DirectIndex``: every
turn becomes a memory), then a refiner adds the contextual vectors, as workers do. Per
memory: the growth of ``used_memory`` (all-in, once the search GC has run); what dropping
the index frees, then what deleting the hashes frees; the average ``MEMORY USAGE`` of a hash
and its ``OBJECT ENCODING``; each field's value size; the index's sizes (``FT.INFO``) and
each vector field's (``FT.DEBUG VECSIM_INFO``). Each layout (``--layouts``) is written in its
own key prefix, one after the other, and dropped once measured:

* ``old``: before issue 15: float32 vectors; the ``id`` and ``event_id`` fields and the
  empty ones; four NUMERIC index fields; Redis's default ``hash-max-listpack-value`` 64 (every
  hash a hashtable); the fields holding a default; per-term field masks; a contextual graph
  of degree 16, the contextual vectors whole;
* ``float16``: ``old`` with float16 vectors; ``listpack``: and ``hash-max-listpack-value``
  1024 (the embedded server's); ``fields``: and neither the fields nobody reads nor three of
  the NUMERIC fields; ``defaults``: and no field holding its default, ``NOFIELDS``, the
  contextual graph of degree ``context_hnsw_m``;
* ``new``: what the code writes now: ``defaults`` with the contextual vectors on 256 of their
  384 directions (``contextual_stored_dims``).

``--hnsw-m 8,16`` measures each layout at each static graph degree, ``--knn`` the recall@10 of
each HNSW graph against an exact search of its own vectors (200 LoCoMo questions).
``--corpus sentences --size N``: N memories of 1-3 LoCoMo sentences instead of the turns,
the contextual vectors embedded in the same write (``--stand-in``: the static vector
zero-padded instead, same sizes, no model time). ``--at-write``: the turns' contextual vectors
in the first write too (no refiner rewriting each memory).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from redis.asyncio import Redis
from redis.commands.search.commands import SearchCommands
from redis.commands.search.query import Query

from benchmarks import locomo
from benchmarks.harness import DirectIndex, embedded_redis
from benchmarks.measure import ratio
from hindsight_redis import Settings
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.vectors import vector_bytes, vectors_from_bytes
from hindsight_redis.index import schema
from hindsight_redis.providers.projection import project
from hindsight_redis.redis.server.launcher import HASH_CONFIG

SUMMARY = "bytes per memory all-in (hash, vectors, HNSW graphs, text index) vs the old layout"
INDEX_SIZES = (
    "inverted_sz_mb",
    "vector_index_sz_mb",
    "offset_vectors_sz_mb",
    "doc_table_size_mb",
    "sortable_values_size_mb",
    "key_table_size_mb",
    "tag_overhead_sz_mb",
    "text_overhead_sz_mb",
    "total_index_memory_sz_mb",
)
OLD_NUMERIC_FIELDS = ("created_at", "last_accessed_at", "write_score", "access_count")
OLD_EMPTY_FIELDS = (
    "original",
    "agent_id",
    "task_type",
    "score_reason",
    "conflicts_with",
    "review",
    "half_life_days",
)
LISTPACK = int(HASH_CONFIG["hash-max-listpack-value"])


@dataclass(frozen=True)
class Layout:
    """How one run stores its memories."""

    datatype: str
    old_fields: bool  # id, event_id and the empty fields
    listpack_value: int  # the server's hash-max-listpack-value while it writes
    old_numerics: bool  # the four NUMERIC index fields
    defaults: bool = True  # the fields holding a default, and per-term field masks
    context_m: int = 16  # the contextual graph's degree
    context_stored: int = 0  # contextual dims stored (0: whole)


LAYOUTS = {
    "old": Layout("float32", old_fields=True, listpack_value=64, old_numerics=True),
    "float16": Layout("float16", old_fields=True, listpack_value=64, old_numerics=True),
    "listpack": Layout("float16", True, listpack_value=LISTPACK, old_numerics=True),
    "fields": Layout("float16", False, listpack_value=LISTPACK, old_numerics=False),
    "defaults": Layout(
        "float16",
        False,
        LISTPACK,
        old_numerics=False,
        defaults=False,
        context_m=Settings().context_hnsw_m,
    ),
}
LAYOUTS["new"] = replace(LAYOUTS["defaults"], context_stored=Settings().contextual_stored_dims)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--layouts", default="old,new", help=", ".join(LAYOUTS))
    parser.add_argument("--hnsw-m", default=str(Settings().hnsw_m), help="e.g. 8,16")
    parser.add_argument("--knn", action="store_true", help="HNSW recall@10 of each graph")
    parser.add_argument("--corpus", default="turns", choices=["turns", "sentences"])
    parser.add_argument("--size", type=int, default=20_000, help="memories of --corpus sentences")
    parser.add_argument("--stand-in", action="store_true", help="stand-in contextual vectors")
    parser.add_argument(
        "--at-write", action="store_true", help="the turns' contextual vectors in the first write"
    )
    parser.add_argument("--limit", type=int, help="the first N turns only (quick: 300)")
    parser.add_argument("--sample", type=int, default=2000, help="hashes inspected")


@contextlib.contextmanager
def index_layout(layout: Layout) -> Iterator[None]:
    """The index of ``layout``: its NUMERIC fields (``index_schema`` reads ``NUMERIC_FIELDS``
    when called) and, with ``defaults``, per-term field masks (no ``NOFIELDS``)."""
    kept = schema.NUMERIC_FIELDS  # type: ignore[attr-defined]  # index_schema's own name
    create = SearchCommands.create_index
    if layout.old_numerics:
        schema.NUMERIC_FIELDS = OLD_NUMERIC_FIELDS  # type: ignore[attr-defined,assignment]
    if layout.defaults:

        def with_field_flags(self: Any, *args: Any, **kwargs: Any) -> Any:
            return create(self, *args, **(kwargs | {"no_field_flags": False}))

        SearchCommands.create_index = with_field_flags  # type: ignore[method-assign]
    try:
        yield
    finally:
        schema.NUMERIC_FIELDS = kept  # type: ignore[attr-defined]
        SearchCommands.create_index = create  # type: ignore[method-assign]


def items(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The memories to write: the LoCoMo turns, or ``--size`` LoCoMo-sentence texts."""
    if args.corpus == "turns":
        return [
            {
                "event_id": f"{t.conversation}-{t.dia_id}".replace(":", "_"),
                "content": t.content,
                "session_id": t.conversation,
                "source": t.dia_id,
                "tags": (t.date,),
            }
            for t in locomo.turns()[: args.limit]
        ]
    rng, sentences = random.Random(7), locomo.Sentences()
    return [
        {"event_id": f"s{n}", "content": sentences.text(rng), "source": f"s{n}"}
        for n in range(args.size)
    ]


def layout_fields(layout: Layout, memory_id: str, now: float, index: DirectIndex) -> dict[str, str]:
    """The fields ``layout`` stores beyond what the code writes now."""
    extra = {"indexed_at": f"{now:.6f}"}  # the worker's commit writes it
    if layout.defaults:
        extra |= {
            "access_count": "0",
            "last_accessed_at": f"{now:.6f}",
            "embedding_model": index.embedder.model_id,
            "embedding_dims": str(index.info.dims),
            "lang": "english",
            "script": "latin",
            "protected": "0",
        }
    if layout.old_fields:
        extra |= {name: "" for name in OLD_EMPTY_FIELDS} | {"id": memory_id, "event_id": memory_id}
    return extra


async def used_memory(redis: Redis) -> int:
    """``used_memory`` once the search module's GC has had its turn."""
    await asyncio.sleep(3)  # the embedded server collects every 2 s
    return int((await redis.info("memory"))["used_memory"])


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def hash_figures(redis: Redis, found: list[Any]) -> dict[str, Any]:
    """Average MEMORY USAGE, encodings, and each field's average value size."""
    async with redis.pipeline(transaction=False) as pipe:
        for key in found:
            pipe.memory_usage(key, samples=0)
            pipe.object("encoding", key)
            pipe.hgetall(key)
        replies = await pipe.execute()
    sizes: dict[str, list[int]] = {}
    for fields in replies[2::3]:
        for name, value in fields.items():
            sizes.setdefault(_text(name), []).append(len(value))
    per_field = {
        name: (sum(lens) / len(found), len(lens) / len(found))
        for name, lens in sorted(sizes.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    }
    return {
        "memory_usage": statistics.fmean(replies[0::3]),
        "encodings": dict(Counter(_text(e) for e in replies[1::3])),
        "fields": per_field,
        "field_count": sum(share for _, share in per_field.values()),
        "names_bytes": sum(len(name) * share for name, (_, share) in per_field.items()),
        "values_bytes": sum(size for size, _ in per_field.values()),
    }


async def index_figures(index: DirectIndex, fields: list[str]) -> dict[str, float]:
    """The FT.INFO sizes (bytes), and each vector field's memory (bytes)."""
    name = index.info.name
    info = await index.redis.ft(name).info()  # type: ignore[no-untyped-call]
    out = {k.removesuffix("_mb"): float(info[k]) * 2**20 for k in INDEX_SIZES if k in info}
    for field in fields:
        reply = await index.redis.execute_command("FT.DEBUG", "VECSIM_INFO", name, field)  # type: ignore[no-untyped-call]
        pairs = dict(zip(map(_text, reply[0::2]), reply[1::2], strict=True))
        out[f"{field} (VECSIM_INFO)"] = float(pairs.get("MEMORY", 0))
    return out


async def knn_recall(
    index: DirectIndex, found: list[Any], field: str, datatype: str, queries: Any
) -> float:
    """Recall@10 of the field's HNSW KNN against an exact search of the same stored vectors
    (a hit counts when it is as near as the exact 10th: ties are not misses)."""
    async with index.redis.pipeline(transaction=False) as pipe:
        for key in found:
            pipe.hget(key, field)
        raws = await pipe.execute()
    keys = [_text(k) for k, raw in zip(found, raws, strict=True) if raw]
    matrix = vectors_from_bytes([raw for raw in raws if raw], datatype)
    knn = Query(f"*=>[KNN 10 @{field} $v AS d]").return_fields("d").dialect(2)
    total = 0.0
    for query in queries:
        cosine = matrix @ query
        floor = np.sort(cosine)[-10] - 1e-4
        reply = await index.redis.ft(index.info.name).search(
            knn, query_params={"v": vector_bytes(query, datatype)}
        )
        near = {_text(doc.id) for doc in reply.docs}
        exact = {keys[i] for i in np.flatnonzero(cosine >= floor)}
        total += min(10, len(near & exact)) / 10
    return total / len(queries)


async def measure(url: str, label: str, args: argparse.Namespace) -> dict[str, Any]:
    """Index the memories in the layout and graph degree of ``label``; the figures, then
    drop all."""
    name, _, m = label.partition(" m")
    layout = LAYOUTS[name]
    settings = Settings(
        redis_url=url,
        key_prefix=f"mem{uuid.uuid4().hex[:6]}",
        namespace="locomo",
        profile="ephemeral",
        hnsw_m=int(m),
        context_hnsw_m=layout.context_m,
        vector_datatype=layout.datatype,
        contextual_stored_dims=layout.context_stored,
        max_backlog=1_000_000,
    )
    redis = Redis.from_url(url)
    try:
        await redis.config_set("hash-max-listpack-value", layout.listpack_value)
        before = await used_memory(redis)
        with index_layout(layout):
            index = await DirectIndex.open(redis, settings)
        now, memories = time.time(), items(args)
        extras = [layout_fields(layout, item["event_id"], now, index) for item in memories]
        for item in memories:
            item["created_at"] = now
        context = "stand-in" if args.stand_in else "write"
        if args.corpus == "turns" and not args.at_write:
            context = "refine"  # as on the write path: a refiner adds them
        await index.add(memories, context=context, extras=extras, batch=256)
        await redis.config_set("hash-max-listpack-value", LISTPACK)
        loaded = await used_memory(redis)
        info = index.info
        fields = [info.vector_field] + ([CONTEXT_FIELD] if info.has_context else [])
        found = [k async for k in redis.scan_iter(match=index.keys.doc_prefix + "*", count=1000)]
        n = len(found)
        result: dict[str, Any] = {
            "layout": label,
            "memories": n,
            "hash": await hash_figures(redis, sorted(found)[: args.sample]),
            "index": {k: v / n for k, v in (await index_figures(index, fields)).items()},
        }
        if args.knn:
            questions = random.Random(3).sample(locomo.Sentences().questions, 200)
            result["knn"] = {
                info.vector_field: await knn_recall(
                    index,
                    found,
                    info.vector_field,
                    info.datatype,
                    await index.embedder.embed(questions),
                )
            }
            if index.contextual is not None and info.has_context and not args.stand_in:
                vectors = project(await index.contextual.embed(questions), info.context_projection)
                result["knn"][CONTEXT_FIELD] = await knn_recall(
                    index, found, CONTEXT_FIELD, info.context_datatype, vectors
                )
        await redis.execute_command("FT.DROPINDEX", info.name)  # type: ignore[no-untyped-call]
        unindexed = await used_memory(redis)
        for start in range(0, n, 1000):
            await redis.delete(*found[start : start + 1000])
        await redis.delete(index.keys.index_meta)
        emptied = await used_memory(redis)
        result["all_in"] = (loaded - before) / n
        result["freed_by_dropping_the_index"] = (loaded - unindexed) / n
        result["freed_by_deleting_the_hashes"] = (unindexed - emptied) / n
        return result
    finally:
        await redis.aclose()


def report(results: list[dict[str, Any]]) -> None:
    """Print the comparison table and each layout's field breakdown."""
    cols = [r["layout"] for r in results]
    print(f"\nbytes per memory ({results[0]['memories']:,} memories)\n")
    print("| | " + " | ".join(cols) + " |")
    print("|---" + "|---:" * len(cols) + "|")

    def row(label: str, values: list[float], fmt: str = "{:,.0f}") -> None:
        print(f"| {label} | " + " | ".join(fmt.format(v) for v in values) + " |")

    row("**used_memory growth (all-in)**", [r["all_in"] for r in results], "**{:,.0f}**")
    row("memories per GB (all-in)", [2**30 / r["all_in"] for r in results])
    row("freed by dropping the index", [r["freed_by_dropping_the_index"] for r in results])
    row("freed by deleting the hashes", [r["freed_by_deleting_the_hashes"] for r in results])
    row("`MEMORY USAGE` of a hash", [r["hash"]["memory_usage"] for r in results])
    row("fields per hash", [r["hash"]["field_count"] for r in results], "{:.1f}")
    row("field values", [r["hash"]["values_bytes"] for r in results])
    row("field names", [r["hash"]["names_bytes"] for r in results])
    for key in results[0]["index"]:
        row(f"index: {key}", [r["index"].get(key, 0.0) for r in results])
    for field in results[0].get("knn", {}):
        row(f"HNSW recall@10, {field}", [r["knn"].get(field, 0.0) for r in results], "{:.3f}")
    print("| hash encoding | " + " | ".join(str(r["hash"]["encodings"]) for r in results) + " |")
    for r in results:
        print(f"\n{r['layout']}: field, average value bytes, share of memories holding it")
        for name, (size, share) in r["hash"]["fields"].items():
            print(f"  {name:18} {size:8.1f}  {share:4.2f}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.quick:
        args.limit, args.size = args.limit or 300, min(args.size, 1_000)
    labels = [f"{n} m{m}" for n in args.layouts.split(",") for m in args.hnsw_m.split(",")]

    async def every_layout(url: str) -> list[dict[str, Any]]:
        return [await measure(url, label, args) for label in labels]

    with embedded_redis() as url:
        results = asyncio.run(every_layout(url))
    report(results)
    figures: dict[str, Any] = {"layouts": results}
    if len(results) > 1:
        figures["last_vs_first_all_in"] = ratio(results[-1]["all_in"], results[0]["all_in"])
    return figures
