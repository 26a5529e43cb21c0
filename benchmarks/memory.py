"""Memory per memory: where the bytes of a stored memory go, hash and index.

Every LoCoMo dev turn (2,760) is indexed as ``locomo_recall.py --direct``
does (filters off, so every turn becomes a memory; then the contextual
vectors added, as the workers' refiners would). Printed per memory: the
growth of ``used_memory``; what dropping the index frees, then what deleting
the hashes frees; the average ``MEMORY USAGE`` of a memory hash and its
``OBJECT ENCODING``; each field's value size; the index's sizes from
``FT.INFO`` and each vector field's from ``FT.DEBUG VECSIM_INFO``.

Layouts (``--layouts``), each in its own key prefix on the same server, one
after the other (each dropped once measured), so they compare within a run:

* ``old``: the layout before issue 15: float32 vectors; the ``id`` and
  ``event_id`` fields, and the empty ones (``original``, ``agent_id``...);
  four NUMERIC index fields; Redis's default ``hash-max-listpack-value`` of
  64, so every hash is a hashtable;
* ``float16``: ``old`` with float16 vectors;
* ``listpack``: ``float16`` with ``hash-max-listpack-value`` 1024 (the
  embedded server's now), so the hashes stay listpacks;
* ``fields``: ``listpack`` without the fields nobody reads, one NUMERIC
  index field (what the code wrote on 2026-11-30);
* ``defaults``: ``fields`` without the fields that hold a default
  (``access_count`` 0, ``last_accessed_at``, ``lang`` english, ``script``
  latin, ``protected`` 0, the embedding model and dimensions), an index
  without per-term field masks (``NOFIELDS``: there is one text field) and a
  contextual graph of degree ``context_hnsw_m`` (8; the other layouts' is
  16): what the code wrote on 2026-12-01;
* ``new``: what the code writes now: ``defaults`` with the contextual
  vectors stored on 256 of their 384 directions (``contextual_stored_dims``,
  ``providers.projection``).

``--hnsw-m 8,16`` measures each layout at each graph degree, and with
``--knn`` the recall@10 of each HNSW graph against an exact search of its
own vectors (200 LoCoMo questions, ``hnsw_ef_runtime`` as configured).
``--corpus sentences --size N``: N memories of 1-3 random LoCoMo sentences
(``search_latency.LocomoCorpus``) instead of the 2,760 turns, their
contextual vectors embedded in the same write (``--stand-in``: the static
vector zero-padded instead, same sizes, no MiniLM time). ``--at-write``:
the turns' contextual vectors in the same write too (no refiner).

Run:  python benchmarks/memory.py [--layouts old,float16,listpack,fields,defaults,new] [--limit N]
      [--hnsw-m 16] [--knn] [--corpus sentences --size 50000] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_recall import load_turns
from redis.asyncio import Redis
from redis.commands.search.commands import SearchCommands

import hindsight_redis.schema
from hindsight_redis.index import IndexInfo, MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings
from hindsight_redis.providers.projection import project
from hindsight_redis.providers.vectors import Embedder, vector_bytes, vectors_from_bytes
from hindsight_redis.resp import NEVER_DECODE, as_text, reply_map, search_rows
from hindsight_redis.schema import CONTEXT_FIELD
from hindsight_redis.server.launcher import HASH_CONFIG
from hindsight_redis.settings import Settings

from common import embedded_redis, locomo_path, queue_memory
from search_latency import LocomoCorpus

INDEX_SIZES = (
    "inverted_sz_mb", "vector_index_sz_mb", "offset_vectors_sz_mb", "doc_table_size_mb",
    "sortable_values_size_mb", "key_table_size_mb", "tag_overhead_sz_mb",
    "text_overhead_sz_mb", "total_index_memory_sz_mb",
)  # fmt: skip
OLD_NUMERIC_FIELDS = ("created_at", "last_accessed_at", "write_score", "access_count")
OLD_EMPTY_FIELDS = ("original", "agent_id", "task_type", "score_reason", "conflicts_with",
                    "review", "half_life_days")  # fmt: skip
Text = tuple[str, str, str, str]  # (conversation or "", source, content, tag)


@dataclass(frozen=True)
class Layout:
    """How one run stores its memories."""

    datatype: str
    old_fields: bool  # id, event_id and the empty fields, written before issue 15
    listpack_value: int  # the server's hash-max-listpack-value while it writes
    old_numerics: bool  # the four NUMERIC index fields of before issue 15
    defaults: bool = True  # the fields holding a default, and the field masks, before 2026-12-01
    context_m: int = 16  # the contextual graph's degree before 2026-12-01
    context_stored: int = 0  # contextual dims stored (0: whole, as before 2026-12-02)


_NEW_LISTPACK = int(HASH_CONFIG["hash-max-listpack-value"])
LAYOUTS = {
    "old": Layout("float32", old_fields=True, listpack_value=64, old_numerics=True),
    "float16": Layout("float16", old_fields=True, listpack_value=64, old_numerics=True),
    "listpack": Layout("float16", True, listpack_value=_NEW_LISTPACK, old_numerics=True),
    "fields": Layout("float16", False, listpack_value=_NEW_LISTPACK, old_numerics=False),
    "defaults": Layout(
        "float16",
        False,
        _NEW_LISTPACK,
        old_numerics=False,
        defaults=False,
        context_m=Settings().context_hnsw_m,
    ),
}
LAYOUTS["new"] = replace(LAYOUTS["defaults"], context_stored=Settings().contextual_stored_dims)


def default_fields(event: MemoryEvent, model_id: str, dims: int) -> dict[str, str]:
    """The fields holding a default that memory hashes stored before 2026-12-01."""
    return {
        "access_count": "0", "last_accessed_at": f"{event.created_at:.6f}",
        "embedding_model": model_id, "embedding_dims": str(dims),
        "lang": "english", "script": "latin", "protected": "0",
    }  # fmt: skip


@contextlib.contextmanager
def index_layout(layout: Layout) -> Iterator[None]:
    """The index of ``layout``: its NUMERIC fields (index_schema reads NUMERIC_FIELDS when
    called) and, before 2026-12-01, per-term field masks (no ``NOFIELDS``)."""
    kept = hindsight_redis.schema.NUMERIC_FIELDS
    create = SearchCommands.create_index
    if layout.old_numerics:
        hindsight_redis.schema.NUMERIC_FIELDS = OLD_NUMERIC_FIELDS
    if layout.defaults:

        def with_field_flags(self: Any, *args: Any, **kwargs: Any) -> Any:
            return create(self, *args, **(kwargs | {"no_field_flags": False}))

        SearchCommands.create_index = with_field_flags  # type: ignore[method-assign]
    try:
        yield
    finally:
        hindsight_redis.schema.NUMERIC_FIELDS = kept
        SearchCommands.create_index = create  # type: ignore[method-assign]


def corpus(args: argparse.Namespace) -> list[Text]:
    """The memories to write: the LoCoMo turns, or ``--size`` LoCoMo-sentence texts."""
    if args.corpus == "turns":
        turns = load_turns(json.loads(locomo_path().read_text()))
        return turns[: args.limit] if args.limit else turns
    rng, sentences = random.Random(7), LocomoCorpus()
    return [("", f"s{i}", sentences.text(rng), "") for i in range(args.size)]


async def ingest(
    settings: Settings, texts: list[Text], layout: Layout, args: argparse.Namespace
) -> tuple[IndexInfo, Embedder, Embedder | None]:
    """Index ``texts`` as ``locomo_recall.ingest_direct`` does, in ``layout``.

    The LoCoMo turns get their contextual vectors from a refiner, as on the
    write path (``--at-write``: in the same HSET, as other corpora do).
    """
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = embedder_from_settings(settings)
    contextual = contextual_from_settings(settings)
    redis = Redis.from_url(settings.redis_url or "")
    refine = args.corpus == "turns" and not args.at_write
    try:
        with index_layout(layout):
            info = await MemoryIndex(
                redis, keys, settings.index, settings.search, settings.embedding
            ).ensure(embedder, contextual)
        now = time.time()
        for start in range(0, len(texts), 256):
            chunk = texts[start : start + 256]
            vectors = await embedder.embed([t[2] for t in chunk])
            ctx: Any = [None] * len(chunk)
            if contextual is not None and not refine:
                ctx = (
                    np.pad(vectors, ((0, 0), (0, info.context_dims - info.dims)))
                    if args.stand_in
                    else await contextual.embed([t[2] for t in chunk])
                )
            async with redis.pipeline(transaction=False) as pipe:
                for (conv, dia, content, tag), vec, cvec in zip(chunk, vectors, ctx, strict=True):
                    memory_id = f"{conv}-{dia}".replace(":", "_")
                    event = MemoryEvent(
                        event_id=memory_id, namespace=keys.namespace, content=content,
                        session_id=conv, source=dia, tags=(tag,) if tag else (), created_at=now,
                    )  # fmt: skip
                    extra = {"indexed_at": f"{now:.6f}"}  # the worker's commit writes it
                    if layout.defaults:
                        extra |= default_fields(event, embedder.model_id, info.dims)
                    if layout.old_fields:
                        extra |= {name: "" for name in OLD_EMPTY_FIELDS}
                        extra |= {"id": memory_id, "event_id": memory_id}
                    queue_memory(pipe, keys, info, event, vec, cvec,
                                 extra=extra or None)  # fmt: skip
                await pipe.execute()
        await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).wait_indexed(info.name)
        if contextual is not None and refine:  # what the workers' refiners do
            refiner = Refiner(redis, keys, contextual, batch_size=256)
            while await refiner.refine_once():
                pass
    finally:
        await redis.aclose()
    return info, embedder, contextual


async def used_memory(redis: Redis) -> int:
    """``used_memory`` once the search module's GC has had its turn."""
    await asyncio.sleep(3)  # the embedded server collects every 2 s
    return int((await redis.info("memory"))["used_memory"])


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
            sizes.setdefault(as_text(name), []).append(len(value))
    n = len(found)
    per_field = {
        name: (sum(lens) / n, len(lens) / n)
        for name, lens in sorted(sizes.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    }
    return {
        "memory_usage": statistics.fmean(replies[0::3]),
        "encodings": dict(Counter(as_text(e) for e in replies[1::3])),
        "fields": per_field,
        "field_count": sum(share for _, share in per_field.values()),
        "names_bytes": sum(len(name) * share for name, (_, share) in per_field.items()),
        "values_bytes": sum(size for size, _ in per_field.values()),
    }


async def index_figures(redis: Redis, name: str, vector_fields: list[str]) -> dict[str, float]:
    """The FT.INFO sizes (bytes), and each vector field's memory (bytes)."""
    raw = reply_map(await redis.execute_command("FT.INFO", name))  # type: ignore[no-untyped-call]
    out = {k.removesuffix("_mb"): float(as_text(raw[k])) * 2**20 for k in INDEX_SIZES if k in raw}
    for field in vector_fields:
        reply = await redis.execute_command("FT.DEBUG", "VECSIM_INFO", name, field)  # type: ignore[no-untyped-call]
        out[f"{field} (VECSIM_INFO)"] = float(as_text(reply_map(reply).get("MEMORY", 0)))
    return out


async def knn_recall(
    redis: Redis, info: IndexInfo, found: list[Any], field: str, datatype: str, queries: Any
) -> float:
    """Recall@10 of the field's HNSW KNN against an exact search of the same stored vectors
    (a hit counts when it is as near as the exact 10th: ties are not misses)."""
    async with redis.pipeline(transaction=False) as pipe:
        for key in found:
            pipe.hget(key, field)
        raws = await pipe.execute()
    keys = [k for k, raw in zip(found, raws, strict=True) if raw]
    matrix = vectors_from_bytes([raw for raw in raws if raw], datatype)
    total = 0.0
    for query in queries:
        cosine = matrix @ query
        floor = np.sort(cosine)[-10] - 1e-4
        reply = await redis.execute_command(  # type: ignore[no-untyped-call]
            "FT.SEARCH", info.name, f"*=>[KNN 10 @{field} $v AS d]", "PARAMS", "2", "v",
            vector_bytes(query, datatype), "RETURN", "1", "d", "DIALECT", "2", **NEVER_DECODE,
        )  # fmt: skip
        near = {row.key.encode() for row in search_rows(reply)}
        exact = {keys[i] for i in np.flatnonzero(cosine >= floor)}
        total += min(10, len(near & exact)) / 10
    return total / len(queries)


async def measure(
    url: str, label: str, texts: list[Text], args: argparse.Namespace
) -> dict[str, Any]:
    """Index ``texts`` in the layout and graph degree of ``label``; the figures, then drop all."""
    name, _, m = label.partition(" m")
    layout = LAYOUTS[name]
    settings = Settings(
        redis_url=url, key_prefix=f"mem{uuid.uuid4().hex[:6]}", namespace="locomo",
        profile="ephemeral", embedder=args.embedder, contextual_embedder=args.contextual,
        hnsw_m=int(m), context_hnsw_m=layout.context_m, vector_datatype=layout.datatype,
        contextual_stored_dims=layout.context_stored, max_backlog=1_000_000,
    )  # fmt: skip
    keys = Keys(settings.key_prefix, settings.namespace)
    redis = Redis.from_url(url)
    try:
        await redis.config_set("hash-max-listpack-value", layout.listpack_value)
        before = await used_memory(redis)
        info, embedder, contextual = await ingest(settings, texts, layout, args)
        await redis.config_set("hash-max-listpack-value", _NEW_LISTPACK)
        loaded = await used_memory(redis)
        fields = [info.vector_field] + ([CONTEXT_FIELD] if info.has_context else [])
        found = [k async for k in redis.scan_iter(match=keys.doc_prefix + "*", count=1000)]
        n = len(found)
        result: dict[str, Any] = {
            "layout": label,
            "memories": n,
            "hash": await hash_figures(redis, sorted(found)[: args.sample]),
            "index": {k: v / n for k, v in (await index_figures(redis, info.name, fields)).items()},
        }
        if args.knn:
            rng = random.Random(3)
            questions = rng.sample(LocomoCorpus().questions, 200)
            result["knn"] = {
                info.vector_field: await knn_recall(redis, info, found, info.vector_field,
                                                    info.datatype, await embedder.embed(questions)),
            }  # fmt: skip
            if contextual is not None and not args.stand_in:
                result["knn"][CONTEXT_FIELD] = await knn_recall(
                    redis,
                    info,
                    found,
                    CONTEXT_FIELD,
                    info.context_datatype,
                    project(await contextual.embed(questions), info.context_projection),
                )
        await redis.execute_command("FT.DROPINDEX", info.name)  # type: ignore[no-untyped-call]
        unindexed = await used_memory(redis)
        for start in range(0, n, 1000):
            await redis.delete(*found[start : start + 1000])
        await redis.delete(keys.index_meta)
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
        row(f"HNSW recall@10, {field}", [r["knn"][field] for r in results], "{:.3f}")
    print("| hash encoding | " + " | ".join(str(r["hash"]["encodings"]) for r in results) + " |")
    for r in results:
        print(f"\n{r['layout']}: field, average value bytes, share of memories holding it")
        for name, (size, share) in r["hash"]["fields"].items():
            print(f"  {name:18} {size:8.1f}  {share:4.2f}")


def main() -> None:
    """Parse arguments, start a throwaway embedded Redis, measure each layout."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--layouts", default="old,float16,listpack,fields,defaults,new", help=", ".join(LAYOUTS)
    )
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--contextual", default=Settings().contextual_embedder)
    parser.add_argument("--hnsw-m", default=str(Settings().hnsw_m), help="e.g. 8,16")
    parser.add_argument("--knn", action="store_true", help="HNSW recall@10 of each graph")
    parser.add_argument("--corpus", default="turns", choices=["turns", "sentences"])
    parser.add_argument("--size", type=int, default=20_000, help="memories of --corpus sentences")
    parser.add_argument("--stand-in", action="store_true", help="stand-in contextual vectors")
    parser.add_argument(
        "--at-write", action="store_true", help="contextual vectors in the write, no refiner"
    )
    parser.add_argument("--limit", type=int, default=0, help="the first N turns only")
    parser.add_argument("--sample", type=int, default=2000, help="hashes inspected")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    texts = corpus(args)
    labels = [f"{n} m{m}" for n in args.layouts.split(",") for m in args.hnsw_m.split(",")]
    with embedded_redis() as url:
        results = [asyncio.run(measure(url, label, texts, args)) for label in labels]
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
