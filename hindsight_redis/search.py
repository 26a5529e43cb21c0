"""Hybrid search over a namespace's index, access statistics, conflict listing.

A search is one pipelined round trip (plus one for Chinese queries, which the
server segments first): the vector leg (KNN on the static vector, metadata
filter as pre-filter), the keyword leg (BM25 over optional terms, same
filter: ``query.keyword_query``) and the index generation check. Hybrid
searches on an index with contextual vectors (``pipeline.refine``) add a
third leg beside it, KNN on the contextual vector, sent as soon as its query
embedding (computed in a thread meanwhile) is ready. Hybrid fuses the legs
with ``query.linear_blend`` (default; it beat reciprocal rank fusion on
LoCoMo, see benchmarks/README.md) or RRF (``fusion="rrf"``).

Hits are counted in ``Keys.access_log`` (one ``HINCRBY`` per hit, pipelined);
``flush_access_log`` folds the counts into the memories in one script.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from hindsight_redis.codec import record_from_doc, split_tags
from hindsight_redis.errors import EmbeddingMismatch, InvalidMemory, RedisUnavailable
from hindsight_redis.index import IndexInfo, mismatch_message, reply_map, text
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryRecord, SearchFilters, SearchHit
from hindsight_redis.providers.embedders import Embedder
from hindsight_redis.query import (
    build_filter,
    han_runs,
    is_selective,
    keyword_query,
    keyword_terms,
    linear_blend,
    parse_explain,
    rrf,
    tag_clause,
    top,
)
from hindsight_redis.schema import CONTEXT_FIELD
from hindsight_redis.settings import Settings

logger = logging.getLogger(__name__)

Fusion = Literal["linear", "rrf"]
MODES = ("hybrid", "vector", "keyword")
SCORER = "BM25STD"
HIT_FIELDS = (
    "content",
    "source",
    "agent_id",
    "session_id",
    "task_type",
    "tags",
    "created_at",
    "status",
    "visibility",
    "namespace",
)
# What the legs return: only what ranking and post-filtering need; the hit
# fields of the final top_k are fetched afterwards (replies parse faster).
LEG_FIELDS = ("status", "visibility", "namespace")
_DIST = "__dist"
# Depth of the contextual leg: it adds the candidates the other two legs miss;
# 10-50 gave the same LoCoMo recall, and fewer rows are cheaper to fetch.
CONTEXT_DEPTH = 20
NEVER_DECODE = {"NEVER_DECODE": True}  # replies keep bytes (vectors)

# Fold pending access counts into the memories; skip memories deleted since.
_FLUSH = """
local pairs = redis.call('HGETALL', KEYS[1])
local limit = tonumber(ARGV[3]) * 2
local done = 0
for i = 1, math.min(#pairs, limit), 2 do
  local key = ARGV[1] .. pairs[i]
  if redis.call('EXISTS', key) == 1 then
    redis.call('HINCRBY', key, 'access_count', pairs[i + 1])
    redis.call('HSET', key, 'last_accessed_at', ARGV[2])
  end
  redis.call('HDEL', KEYS[1], pairs[i])
  done = done + 1
end
return done
"""


@dataclass(frozen=True, slots=True)
class _Row:
    doc_id: str
    score: float | None
    fields: dict[str, Any]


def parse_search_reply(reply: Any, *, with_scores: bool) -> list[_Row]:
    """The rows of an ``FT.SEARCH`` reply, RESP2 or RESP3."""
    rows: list[_Row] = []
    if isinstance(reply, Mapping):
        data = reply_map(reply)
        for item in data.get("results") or []:
            entry = reply_map(item)
            score = entry.get("score")
            rows.append(
                _Row(
                    text(entry.get("id")),
                    None if score is None else float(score),
                    reply_map(entry.get("extra_attributes") or {}),
                )
            )
        return rows
    items = list(reply[1:])
    step = 3 if with_scores else 2
    for i in range(0, len(items) - step + 1, step):
        score = float(items[i + 1]) if with_scores else None
        rows.append(_Row(text(items[i]), score, reply_map(items[i + step - 1])))
    return rows


def validate(query: str, top_k: int, mode: str) -> str:
    """Check the arguments of a search; returns the stripped query."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidMemory("query must be a non-empty string")
    if len(query) > 8_000:
        raise InvalidMemory(f"query is {len(query)} characters, limit is 8000")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 100:
        raise InvalidMemory("top_k must be an integer from 1 to 100")
    if mode not in MODES:
        raise InvalidMemory(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return query.strip()


async def _segment(redis: Redis, alias: str, query: str) -> dict[str, list[str]]:
    """Chinese runs of the query, segmented into words by the server (friso)."""
    segmented: dict[str, list[str]] = {}
    for run in dict.fromkeys(han_runs(query)):
        lines = await redis.execute_command(  # type: ignore[no-untyped-call]
            "FT.EXPLAINCLI", alias, run, "LANGUAGE", "chinese", "DIALECT", "2"
        )
        segmented[run] = parse_explain(lines) or [run]
    return segmented


def _vector_command(
    info: IndexInfo,
    filter_expr: str,
    vector: bytes,
    k: int,
    ef: int,
    *,
    field: str | None = None,
    also: Sequence[str] = (),
) -> list[Any]:
    """KNN on ``field`` (default: the static vector), returning ``also`` too."""
    scope = "*" if filter_expr == "*" else f"({filter_expr})"
    knn = f"{scope}=>[KNN $K @{field or info.vector_field} $BLOB EF_RUNTIME $EF AS {_DIST}]"
    fields = [*LEG_FIELDS, *also, _DIST]
    return [
        "FT.SEARCH", info.alias, knn,
        "PARAMS", "6", "K", str(k), "BLOB", vector, "EF", str(max(ef, k)),
        "SORTBY", _DIST, "ASC", "LIMIT", "0", str(k),
        "RETURN", str(len(fields)), *fields,
        "DIALECT", "2",
    ]  # fmt: skip


def _keyword_command(info: IndexInfo, query: str, k: int, also: Sequence[str]) -> list[Any]:
    fields = [*LEG_FIELDS, *also]
    return [
        "FT.SEARCH", info.alias, query, "SCORER", SCORER, "WITHSCORES",
        "LIMIT", "0", str(k), "RETURN", str(len(fields)), *fields, "DIALECT", "2",
    ]  # fmt: skip


def _hit(
    keys: Keys,
    row: _Row,
    vector: float | None,
    keyword: float | None,
    fused: float,
    contextual: float | None = None,
) -> SearchHit:
    f = row.fields
    status = text(f.get("status")) or "active"
    created = text(f.get("created_at"))
    return SearchHit(
        id=row.doc_id.removeprefix(keys.doc_prefix),
        content=text(f.get("content")),
        source=text(f.get("source")),
        agent_id=text(f.get("agent_id")),
        session_id=text(f.get("session_id")),
        task_type=text(f.get("task_type")),
        tags=split_tags(text(f.get("tags"))),
        created_at=float(created) if created else 0.0,
        vector=vector,
        keyword=keyword,
        fused=fused,
        contextual=contextual,
        status=status,  # type: ignore[arg-type]
    )


@dataclass(slots=True)
class _Legs:
    """What the legs of one search returned."""

    vector: list[_Row]
    keyword: list[_Row]
    contextual: list[_Row]


async def search_memories(
    redis: Redis,
    keys: Keys,
    settings: Settings,
    embedder: Embedder,
    index_info: IndexInfo,
    query: str,
    *,
    top_k: int = 5,
    mode: str = "hybrid",
    filters: SearchFilters | None = None,
    fusion: Fusion | None = None,
    candidates: int | None = None,
    record_access: bool = True,
    contextual: Embedder | None = None,
) -> list[SearchHit]:
    """Search the namespace; hits best first, each with its scores.

    ``fusion`` defaults to ``settings.hybrid_fusion``; ``candidates``, the
    depth of each leg, to ``max(settings.search_candidates, 4 * top_k)``.
    With ``contextual`` (the index's contextual embedder), hybrid searches
    add a third leg, KNN on the contextual vectors (``pipeline.refine``); its
    query embedding runs in a thread while the first two legs run on the
    server. Queries with Chinese text skip it (the model is English only).
    Raises ``InvalidMemory`` for bad arguments and ``EmbeddingMismatch`` when
    the embedder differs from the index's.
    """
    query = validate(query, top_k, mode)
    filters = filters or SearchFilters()
    if embedder.model_id != index_info.model_id or embedder.dims != index_info.dims:
        raise EmbeddingMismatch(mismatch_message(index_info, embedder.model_id, embedder.dims))
    depth = max(candidates or max(settings.search_candidates, 4 * top_k), top_k)
    try:
        filter_expr = build_filter(keys.namespace, filters)
    except ValueError as e:
        raise InvalidMemory(str(e)) from e
    chinese = bool(han_runs(query))
    ctx_task: asyncio.Task[Any] | None = None
    if (
        contextual is not None
        and mode == "hybrid"
        and index_info.has_context
        and contextual.model_id == index_info.context_model
        and not chinese
    ):
        ctx_task = asyncio.create_task(contextual.embed([query]))
    try:
        qvec: np.ndarray | None = None
        if mode != "keyword":
            qvec = np.asarray((await embedder.embed([query]))[0], dtype=np.float32)
        terms: list[str] = []
        if mode != "vector":
            try:
                segmented = await _segment(redis, index_info.alias, query) if chinese else None
            except RedisError as e:
                raise RedisUnavailable(f"search failed: {e}") from e
            terms = keyword_terms(query, segmented)
        # Default filters (active, shared) match nearly everything: post-filter
        # them, and pre-filter only when that leaves too few hits.
        pre = is_selective(filters)
        while True:
            legs = await _legs(
                redis, keys, settings, index_info, qvec, terms,
                filter_expr if pre else None, depth, ctx_task,
            )  # fmt: skip
            full = any(len(rows) >= depth for rows in (legs.vector, legs.keyword))
            legs.vector[:] = [r for r in legs.vector if _visible(r, keys, filters)]
            legs.keyword[:] = [r for r in legs.keyword if _visible(r, keys, filters)]
            legs.contextual[:] = [r for r in legs.contextual if _visible(r, keys, filters)]
            everything = (*legs.vector, *legs.keyword, *legs.contextual)
            if pre or not full or len({r.doc_id for r in everything}) >= top_k:
                break
            pre = True
        ctx_qvec = None
        if ctx_task is not None and ctx_task.done() and ctx_task.exception() is None:
            ctx_qvec = np.asarray(ctx_task.result()[0], np.float32)
    finally:
        if ctx_task is not None and not ctx_task.done():
            ctx_task.cancel()
    fusion = fusion or settings.hybrid_fusion
    hits = _fuse(keys, settings, index_info, qvec, ctx_qvec, legs, top_k, mode, fusion, depth)
    return await _with_fields(redis, keys, hits, record_access=record_access)


def _visible(row: _Row, keys: Keys, filters: SearchFilters) -> bool:
    """The default filters, checked on a returned row."""
    f = row.fields
    if text(f.get("namespace")) != keys.namespace:
        return False
    if not filters.include_archived and text(f.get("status")) != "active":
        return False
    return bool(filters.agent_id) or text(f.get("visibility")) in ("shared", "")


def _check_replies(info: IndexInfo, replies: Sequence[Any]) -> None:
    for reply in replies:
        if isinstance(reply, ResponseError):
            if info.vector_field in str(reply):
                raise EmbeddingMismatch(
                    f"index {info.alias} no longer has field {info.vector_field} "
                    "(rebuilt); call MemoryIndex.ensure() again"
                ) from reply
            raise InvalidMemory(f"search failed: {reply}") from reply
        if isinstance(reply, Exception):
            raise RedisUnavailable(f"search failed: {reply}") from reply


async def _legs(
    redis: Redis,
    keys: Keys,
    settings: Settings,
    info: IndexInfo,
    qvec: np.ndarray | None,
    terms: Sequence[str],
    filter_expr: str | None,
    depth: int,
    ctx_task: asyncio.Task[Any] | None,
) -> _Legs:
    """The vector and keyword legs in one pipelined round trip; beside it, the contextual leg.

    The contextual KNN is sent (on another pooled connection) as soon as its
    query embedding is ready, without waiting for the first reply. The legs
    return the vectors of their candidates (static and contextual), so every
    candidate gets each cosine, whichever leg found it.
    """
    kw_query = keyword_query(terms, filter_expr)
    ctx = (CONTEXT_FIELD,) if ctx_task is not None else ()

    async def first() -> list[Any]:
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.index_meta, "generation")
            if qvec is not None:
                cmd = _vector_command(
                    info, filter_expr or "*", qvec.tobytes(), depth, settings.hnsw_ef_runtime,
                    also=ctx,
                )  # fmt: skip
                pipe.execute_command(*cmd, **NEVER_DECODE)
            if kw_query is not None:
                also = (info.vector_field, *ctx) if qvec is not None else ()
                cmd = _keyword_command(info, kw_query, depth, also)
                pipe.execute_command(*cmd, **NEVER_DECODE)
            return list(await pipe.execute(raise_on_error=False))

    async def contextual() -> Any:
        if ctx_task is None:
            return None
        try:
            ctx_qvec = np.asarray((await ctx_task)[0], dtype=np.float32)
        except Exception as e:  # a broken contextual model must not break search
            logger.warning("contextual query embedding failed (%s); searching without it", e)
            return None
        cmd = _vector_command(
            info, filter_expr or "*", ctx_qvec.tobytes(), min(depth, CONTEXT_DEPTH),
            settings.hnsw_ef_runtime, field=CONTEXT_FIELD, also=(info.vector_field,),
        )  # fmt: skip
        try:
            return await redis.execute_command(*cmd, **NEVER_DECODE)  # type: ignore[no-untyped-call]
        except ResponseError as e:
            return e

    try:
        replies, ctx_reply = await asyncio.gather(first(), contextual())
    except RedisError as e:
        raise RedisUnavailable(f"search failed: {e}") from e
    generation = text(replies[0])
    if generation and int(generation) != info.generation:
        raise EmbeddingMismatch(
            f"index {info.alias} was rebuilt (generation {generation}, this "
            f"client has {info.generation}); call MemoryIndex.ensure() again"
        )
    _check_replies(info, replies[1:])
    if isinstance(ctx_reply, ResponseError):  # the alias moved to an index without the field
        raise EmbeddingMismatch(
            f"index {info.alias} no longer has field {CONTEXT_FIELD} "
            f"(rebuilt: {ctx_reply}); call MemoryIndex.ensure() again"
        ) from ctx_reply
    legs = _Legs([], [], [])
    if qvec is not None:
        legs.vector = parse_search_reply(replies[1], with_scores=False)
    if kw_query is not None:
        legs.keyword = parse_search_reply(replies[-1], with_scores=True)
    if ctx_reply is not None:
        legs.contextual = parse_search_reply(ctx_reply, with_scores=False)
    return legs


def _cosines(
    rows: Mapping[str, _Row], field: str, qvec: np.ndarray | None, known: Mapping[str, float]
) -> dict[str, float]:
    """Cosines with the (unit) query vector of the ``field`` vectors the rows carry.

    Rows already in ``known``, or without the field (a memory not refined
    yet), are skipped; one matrix product for the rest.
    """
    if qvec is None:
        return {}
    size = 4 * len(qvec)
    ids: list[str] = []
    blobs: list[bytes] = []
    for doc_id, row in rows.items():
        raw = row.fields.get(field)
        if doc_id not in known and isinstance(raw, bytes) and len(raw) == size:
            ids.append(doc_id)
            blobs.append(raw)
    if not ids:
        return {}
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1)
    return dict(zip(ids, (matrix @ qvec).tolist(), strict=True))


def _fuse(
    keys: Keys,
    settings: Settings,
    info: IndexInfo,
    qvec: np.ndarray | None,
    ctx_qvec: np.ndarray | None,
    legs: _Legs,
    top_k: int,
    mode: str,
    fusion: Fusion,
    depth: int,
) -> list[SearchHit]:
    rows: dict[str, _Row] = {}
    cosine: dict[str, float] = {}
    context: dict[str, float] = {}
    for row in legs.vector:
        rows[row.doc_id] = row
        cosine[row.doc_id] = 1.0 - float(text(row.fields.get(_DIST)) or 1.0)
    for row in legs.contextual:
        rows.setdefault(row.doc_id, row)
        context[row.doc_id] = 1.0 - float(text(row.fields.get(_DIST)) or 1.0)
    bm25: dict[str, float] = {}
    for row in legs.keyword:
        if not row.score or row.score <= 0.0:
            continue  # matched a stem only: selected by the query, but scored 0
        rows.setdefault(row.doc_id, row)
        bm25[row.doc_id] = row.score
    # Each candidate's cosines from the vectors its leg returned.
    cosine.update(_cosines(rows, info.vector_field, qvec, cosine))
    context.update(_cosines(rows, CONTEXT_FIELD, ctx_qvec, context))
    if mode == "vector":
        fused = dict(cosine)
    elif mode == "keyword":
        fused = dict(bm25)
    elif fusion == "rrf":
        rankings = [top(cosine, len(cosine)), top(bm25, len(bm25))]
        fused = rrf([*rankings, top(context, len(context))] if context else rankings)
    else:
        fused = linear_blend(
            cosine,
            bm25,
            alpha=settings.hybrid_alpha,
            keyword_complete=len(legs.keyword) < depth,
            contextual=context or None,
            contextual_weight=settings.hybrid_contextual_weight,
        )
    return [
        _hit(keys, rows[d], cosine.get(d), bm25.get(d), fused[d], context.get(d))
        for d in top(fused, top_k)
    ]


async def _with_fields(
    redis: Redis, keys: Keys, hits: list[SearchHit], *, record_access: bool
) -> list[SearchHit]:
    """Fill in the stored fields of the final hits and, in the same round trip,
    count their access (batched in ``Keys.access_log``, folded in by workers)."""
    if not hits:
        return hits
    try:
        async with redis.pipeline(transaction=False) as pipe:
            for hit in hits:
                pipe.hmget(keys.doc(hit.id), list(HIT_FIELDS))
            if record_access:
                for hit in hits:
                    pipe.hincrby(keys.access_log, hit.id, 1)
            rows = (await pipe.execute())[: len(hits)]
    except RedisError as e:
        raise RedisUnavailable(f"search failed: {e}") from e
    out = []
    for hit, values in zip(hits, rows, strict=True):
        if values[0] is None:
            continue  # deleted between the query and now
        row = _Row(keys.doc(hit.id), None, dict(zip(HIT_FIELDS, values, strict=True)))
        out.append(_hit(keys, row, hit.vector, hit.keyword, hit.fused, hit.contextual))
    return out


async def flush_access_log(
    redis: Redis, keys: Keys, *, batch: int = 1000, now: float | None = None
) -> int:
    """Fold pending hit counts into ``access_count``/``last_accessed_at``; returns memories updated.

    Call it periodically (the worker does, throttled); each call handles up
    to ``batch`` memories in one script.
    """
    stamp = f"{time.time() if now is None else now:.6f}"
    try:
        done = await redis.eval(_FLUSH, 1, keys.access_log, keys.doc_prefix, stamp, str(batch))
    except RedisError as e:
        raise RedisUnavailable(f"could not flush access counts: {e}") from e
    return int(done)


async def list_conflicts(
    redis: Redis, keys: Keys, *, limit: int = 100, include_archived: bool = False
) -> list[MemoryRecord]:
    """Memories flagged ``review=conflict``, newest first, with ``conflicts_with`` ids."""
    expr = f"{tag_clause('namespace', keys.namespace)} {tag_clause('review', 'conflict')}"
    if not include_archived:
        expr += " " + tag_clause("status", "active")
    try:
        reply = await redis.execute_command(  # type: ignore[no-untyped-call]
            "FT.SEARCH", keys.index_alias, expr, "SORTBY", "created_at", "DESC",
            "LIMIT", "0", str(limit), "DIALECT", "2", **NEVER_DECODE,
        )  # fmt: skip
    except RedisError as e:
        raise RedisUnavailable(f"could not list conflicts: {e}") from e
    records = []
    for row in parse_search_reply(reply, with_scores=False):
        fields = {k: v for k, v in row.fields.items() if not k.startswith(("vec_g", "ctx_"))}
        records.append(record_from_doc(row.doc_id.removeprefix(keys.doc_prefix), fields))
    return records
