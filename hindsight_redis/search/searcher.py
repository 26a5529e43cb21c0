"""Hybrid search over a namespace's index: the legs, then fusion, then the hits.

A search is one pipelined round trip (plus one for Chinese queries, which the
server segments first): the vector leg (KNN on the static vector), the
keyword leg (BM25 over optional terms: ``query.keyword_query``) and the index
generation check, sent while the contextual query embedding runs in a
thread; for hybrid searches on an index with contextual vectors
(``pipeline.refine``), one more for the KNN on the contextual vector, once
its query vector is ready. Every leg returns its candidates' hit fields and
vectors, so ``ranking.fuse`` orders the candidates and the hits are built
without another read; their access is counted in the background
(``access.HitCounter``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np
from prometheus_client import Histogram
from redis.asyncio import Redis

from hindsight_redis.core.checks import check_search
from hindsight_redis.core.documents import HIT_ONLY_FIELDS as _HIT_ONLY
from hindsight_redis.core.documents import hit_from_fields
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.core.resp import NEVER_DECODE, SearchRow, as_text, search_rows
from hindsight_redis.core.text import han_runs
from hindsight_redis.core.vectors import vector_bytes
from hindsight_redis.errors import (
    EmbeddingMismatch,
    RedisCommandError,
    map_redis_error,
    redis_errors,
)
from hindsight_redis.index.filters import build_filter, visible
from hindsight_redis.index.gc import ensure_search_gc
from hindsight_redis.index.manager import IndexInfo, MemoryIndex, mismatch_message
from hindsight_redis.lifecycle.access import HitCounter
from hindsight_redis.lifecycle.review import prefer_newer
from hindsight_redis.providers.embedders import (
    CachedEmbedder,
    contextual_from_settings,
    embedder_from_settings,
)
from hindsight_redis.providers.projection import project
from hindsight_redis.providers.vectors import Embedder
from hindsight_redis.search import time_boost, time_search
from hindsight_redis.search.query import (
    DISTANCE,
    is_selective,
    keyword_command,
    keyword_query,
    keyword_terms,
    knn_command,
    parse_explain,
)
from hindsight_redis.search.ranking import Blend, Fusion, LegScores, Mode, Ranked, fuse
from hindsight_redis.search.term_stats import TermStats
from hindsight_redis.settings import Settings

logger = logging.getLogger(__name__)

# The contextual leg adds what the others miss: 10-50 gave the same LoCoMo recall.
CONTEXT_DEPTH = 20
# Han runs of a query segmented by the server; later runs are used whole.
_SEGMENTED_RUNS = 64


SEARCH_SECONDS = Histogram(
    "hindsight_search_seconds",
    "Time of one successful search through the public API.",
    ["namespace", "mode"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)


def observe_search(namespace: str, mode: str, seconds: float) -> None:
    """Record one search of ``namespace`` in ``mode`` that took ``seconds``."""
    SEARCH_SECONDS.labels(namespace=namespace, mode=mode).observe(seconds)


@dataclass(slots=True)
class _Plan:
    """One search, as the legs need it."""

    top_k: int
    mode: Mode
    filters: SearchFilters
    filter_expr: str
    depth: int
    query_vector: np.ndarray | None
    terms: list[str]
    context_task: asyncio.Task[np.ndarray] | None
    chinese: bool = False
    common: set[str] = dataclass_field(default_factory=set)  # terms that only score (term_stats)


@dataclass(slots=True)
class _Legs:
    """The rows each leg returned, post-filtered."""

    vector: list[SearchRow]
    keyword: list[SearchRow]
    contextual: list[SearchRow]
    full: bool  # a leg returned as many rows as it asked for


class Searcher:
    """Searches one namespace: holds the client, keys, settings, embedders and index."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        settings: Settings,
        embedder: Embedder,
        info: IndexInfo,
        contextual: Embedder | None = None,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.settings = settings
        self.embedder = embedder
        self.info = info
        self.contextual = contextual
        self.hit_counter = HitCounter(redis, keys)
        self.term_stats = TermStats(
            common_share=settings.keyword_common_share,
            common_min_docs=settings.keyword_common_min_docs,
        )

    @classmethod
    async def open(cls, redis: Redis, keys: Keys, settings: Settings) -> Searcher:
        """Ensure the index exists and matches the configured embedders (cached for queries)."""
        embedder = CachedEmbedder(embedder_from_settings(settings.embedding))
        ctx = contextual_from_settings(settings.embedding, for_queries=True)
        contextual = CachedEmbedder(ctx) if ctx is not None else None
        info = await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).ensure(embedder, contextual)
        await ensure_search_gc(redis, settings.index, settings.connection)
        return cls(redis, keys, settings, embedder, info, contextual)

    async def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: Mode = "hybrid",
        filters: SearchFilters | None = None,
        fusion: Fusion | None = None,
        candidates: int | None = None,
        record_access: bool = True,
    ) -> list[SearchHit]:
        """Search the namespace; hits best first, each with its scores.

        ``fusion`` defaults to ``settings.hybrid_fusion``; ``candidates``, the
        depth of each leg, to ``max(settings.search_candidates, 4 * top_k)``.
        Queries with Chinese text skip the contextual leg (its model is
        English only). Raises ``InvalidQuery`` for bad arguments and
        ``EmbeddingMismatch`` when the embedder differs from the index's.
        """
        started = time.perf_counter()
        query = check_search(query, top_k, mode)
        info, embedder = self.info, self.embedder
        if embedder.model_id != info.model_id or embedder.dims != info.dims:
            raise EmbeddingMismatch(mismatch_message(info, embedder.model_id, embedder.dims))
        filters = filters or SearchFilters()
        plan = _Plan(
            top_k=top_k,
            mode=mode,
            filters=filters,
            filter_expr=build_filter(self.keys.namespace, filters),
            depth=max(candidates or max(self.settings.search_candidates, 4 * top_k), top_k),
            query_vector=None,
            terms=[],
            context_task=None,
        )
        when = time_boost.configured(query, time.time(), self.settings)  # dates, a "when?"
        chinese = plan.chinese = bool(han_runs(query))
        if self._has_context_leg(mode) and not chinese:
            plan.context_task = asyncio.create_task(self._embed_context(query))
        blend = Blend(
            alpha=self.settings.hybrid_alpha,
            contextual_weight=self.settings.hybrid_contextual_weight,
            fusion=fusion or self.settings.hybrid_fusion,
            min_vector=_floor(self.settings.search_min_vector, embedder),
            min_contextual=_floor(self.settings.search_min_contextual, self.contextual),
            min_vector_foreign=_floor(
                self.settings.search_min_vector, embedder, "cross_language_floor"
            ),
            cross_language=self.settings.hybrid_cross_language,
        )
        with redis_errors("search"):
            try:
                if mode != "keyword":
                    plan.query_vector = np.asarray((await embedder.embed([query]))[0], np.float32)
                if mode != "vector":
                    plan.terms = keyword_terms(
                        query, await self._segment(query) if chinese else None
                    )
                    plan.common = self.term_stats.common(plan.terms)
                fetch = functools.partial(self._legs, plan)  # and what happened in its range:
                legs = await time_search.with_window(
                    self._run_legs(plan), when, filters, self.keys, fetch
                )
                ranked = fuse(
                    self._scores(legs, plan),
                    mode=mode,
                    blend=blend,
                    top_k=time_boost.pool_size(top_k, when, plan.depth),
                    query_vector=plan.query_vector,
                    context_vector=self._context_vector(plan),
                )
            finally:
                if plan.context_task is not None and not plan.context_task.done():
                    plan.context_task.cancel()
            hits = time_boost.boost(self._hits(ranked, legs), when, top_k)
            hits = await time_search.lead_in(
                self.redis, self.keys, self.info.alias, hits, when, filters
            )  # the turns telling when
        if record_access:
            self.hit_counter.count(hit.id for hit in hits)  # in the background
        self.term_stats.learn_later(self.redis, self.info.alias, plan.terms)
        hits = prefer_newer(hits, query)  # an open contradiction: the newer first
        observe_search(self.keys.namespace, mode, time.perf_counter() - started)
        return hits

    async def aclose(self) -> None:
        """Send the pending hit counts and stop the background term counts (before the
        client closes its connection)."""
        await self.hit_counter.drain()
        await self.term_stats.aclose()

    def _has_context_leg(self, mode: Mode) -> bool:
        contextual, info = self.contextual, self.info
        return (
            contextual is not None
            and mode == "hybrid"
            and info.has_context
            and contextual.model_id == info.context_model
        )

    async def _segment(self, query: str) -> dict[str, list[str]]:
        """Chinese runs of the query, segmented into words by the server (friso).

        One round trip, for the first ``_SEGMENTED_RUNS`` distinct runs (a query
        keeps 64 terms anyway): a query of thousands of runs costs no more.
        """
        runs = list(dict.fromkeys(han_runs(query)))[:_SEGMENTED_RUNS]
        async with self.redis.pipeline(transaction=False) as pipe:
            for run in runs:
                pipe.execute_command(
                    "FT.EXPLAINCLI", self.info.alias, run, "LANGUAGE", "chinese", "DIALECT", "2"
                )
            replies = await pipe.execute()
        pairs = zip(runs, replies, strict=True)
        return {run: parse_explain(lines) or [run] for run, lines in pairs}

    async def _run_legs(self, plan: _Plan) -> _Legs:
        """The legs, post-filtered by the default filters.

        Default filters (active, shared) match nearly everything: they are
        post-filtered, and pre-filtered only when that leaves too few hits.
        """
        pre = is_selective(plan.filters)
        while True:
            legs = await self._legs(plan, plan.filter_expr if pre else None)
            found = {r.key for r in (*legs.vector, *legs.keyword, *legs.contextual)}
            if pre or not legs.full or len(found) >= plan.top_k:
                return legs
            pre = True

    async def _legs(self, plan: _Plan, filter_expr: str | None) -> _Legs:
        """The static and keyword legs in one pipelined round trip, sent at once; then
        the contextual KNN, once its query vector (computed in a thread meanwhile) is
        ready.

        The first legs' round trip and reply parsing overlap the contextual query
        embedding, which sets the pace (benchmarks/README.md, search speed). Each
        leg returns its candidates' vectors (static and contextual), so every
        candidate gets each cosine, whichever leg found it.
        """
        info = self.info
        kw_query = None
        if plan.mode != "vector":
            kw_query = keyword_query(plan.terms, filter_expr, common=plan.common)
        ctx = (*_HIT_ONLY, CONTEXT_FIELD) if plan.context_task is not None else _HIT_ONLY
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(self.keys.index_meta, "generation")
            if plan.query_vector is not None:
                vector = vector_bytes(plan.query_vector, info.datatype)
                pipe.execute_command(
                    *knn_command(
                        info.alias,
                        info.vector_field,
                        filter_expr,
                        vector,
                        plan.depth,
                        self.settings.hnsw_ef_runtime,
                        also=ctx,
                    ),
                    **NEVER_DECODE,
                )
            if kw_query is not None:
                also = (info.vector_field, *ctx) if plan.query_vector is not None else _HIT_ONLY
                command = keyword_command(info.alias, kw_query, plan.depth, also)
                pipe.execute_command(*command, **NEVER_DECODE)
            replies = await pipe.execute(raise_on_error=False)
        self._check_generation(replies[0])  # a reindex first: then the legs' errors follow
        legs = iter(replies[1:])
        vector_reply = next(legs) if plan.query_vector is not None else None
        keyword_reply = next(legs) if kw_query is not None else None
        for reply in (vector_reply, keyword_reply):
            if isinstance(reply, Exception):
                self._raise_leg_error(reply, contextual=False)
        vector_rows = search_rows(vector_reply) if vector_reply is not None else []
        keyword_rows = search_rows(keyword_reply, with_scores=True) if keyword_reply else []
        scope = self.keys.namespace, plan.filters
        return _Legs(
            vector=[r for r in vector_rows if visible(r.fields, *scope)],
            keyword=[r for r in keyword_rows if visible(r.fields, *scope)],
            contextual=[
                r
                for r in await self._contextual_rows(plan, filter_expr)
                if visible(r.fields, *scope)
            ],
            full=plan.depth in (len(vector_rows), len(keyword_rows)),
        )

    async def _contextual_rows(self, plan: _Plan, filter_expr: str | None) -> list[SearchRow]:
        """The contextual KNN's rows; none without the leg or its query vector."""
        context = await self._context_query(plan)
        if context is None:
            return []
        info = self.info
        try:
            reply = await self.redis.execute_command(  # type: ignore[no-untyped-call]
                *knn_command(
                    info.alias,
                    CONTEXT_FIELD,
                    filter_expr,
                    vector_bytes(context, info.context_datatype),
                    min(plan.depth, CONTEXT_DEPTH),
                    self.settings.hnsw_ef_runtime,
                    also=(*_HIT_ONLY, info.vector_field),
                ),
                **NEVER_DECODE,
            )
        except Exception as e:  # mapped; a refusal: the alias moved to an index without the field
            self._raise_leg_error(e, contextual=True)
        return search_rows(reply)

    async def _embed_context(self, query: str) -> np.ndarray:
        """The contextual query vector, projected as the index stores its vectors."""
        vectors = await self.contextual.embed([query])  # type: ignore[union-attr]
        return np.asarray(project(vectors, self.info.context_projection)[0])

    async def _context_query(self, plan: _Plan) -> np.ndarray | None:
        """The contextual query vector; None without the leg, or when the model failed."""
        if plan.context_task is None:
            return None
        try:
            return await plan.context_task
        except Exception as e:  # a broken contextual model must not break search
            logger.warning("contextual query embedding failed (%s); searching without it", e)
            plan.context_task = None
            return None

    def _check_generation(self, reply: Any) -> None:
        if isinstance(reply, Exception):
            raise reply  # mapped by the boundary
        generation = as_text(reply)
        if generation and int(generation) != self.info.generation:
            raise EmbeddingMismatch(
                f"index {self.info.alias} was rebuilt (generation {generation}, this "
                f"client has {self.info.generation}); open the index again"
            )

    def _raise_leg_error(self, error: Exception, *, contextual: bool) -> None:
        """Raise a leg's error; a refused leg: the alias moved to an index without our field."""
        mapped = map_redis_error(error, "search")
        if mapped is None:
            raise error
        if isinstance(mapped, RedisCommandError):
            field = CONTEXT_FIELD if contextual else self.info.vector_field
            if contextual or field in mapped.reply:
                raise EmbeddingMismatch(
                    f"index {self.info.alias} no longer has field {field} (rebuilt: "
                    f"{mapped.reply}); open the index again"
                ) from error
        raise mapped from error

    def _scores(self, legs: _Legs, plan: _Plan) -> LegScores:
        """Each leg's scores by memory id, and the vectors the legs returned."""
        prefix = self.keys.doc_prefix
        static_field = self.info.vector_field
        scores = LegScores(keyword_complete=len(legs.keyword) < plan.depth)
        query_script = "han" if plan.chinese else "latin"
        # Every memory a leg kept, and the vectors returned with it (static, contextual).
        kept: list[SearchRow] = [*legs.vector, *legs.contextual]
        for row in legs.vector:
            scores.cosine[row.key.removeprefix(prefix)] = _similarity(row)
        for row in legs.contextual:
            scores.context[row.key.removeprefix(prefix)] = _similarity(row)
        for row in legs.keyword:
            if not row.score or row.score <= 0.0:
                continue  # matched a stem only: selected by the query, but scored 0
            scores.bm25[row.key.removeprefix(prefix)] = row.score
            kept.append(row)
        for row in kept:
            memory_id = row.key.removeprefix(prefix)
            if (as_text(row.fields.get("script")) or "latin") != query_script:
                scores.foreign.add(memory_id)
            for field, vectors in (
                (static_field, scores.static_vectors),
                (CONTEXT_FIELD, scores.context_vectors),
            ):
                raw = row.fields.get(field)
                if isinstance(raw, bytes):
                    vectors.setdefault(memory_id, raw)
        return scores

    @staticmethod
    def _context_vector(plan: _Plan) -> np.ndarray | None:
        task = plan.context_task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()

    def _hits(self, ranked: Sequence[Ranked], legs: _Legs) -> list[SearchHit]:
        """The ranked memories as hits, from the fields their legs returned."""
        prefix = self.keys.doc_prefix
        fields = {
            row.key.removeprefix(prefix): row.fields
            for row in (*legs.contextual, *legs.keyword, *legs.vector)
        }
        return [
            hit_from_fields(
                item.id,
                fields[item.id],
                fused=item.fused,
                vector=item.vector,
                keyword=item.keyword,
                contextual=item.contextual,
                bm25=item.bm25,
            )
            for item in ranked
            if item.id in fields
        ]


def _similarity(row: SearchRow) -> float:
    """The cosine of a KNN row (the leg returns its distance, ``1 - cosine``)."""
    return 1.0 - float(as_text(row.fields.get(DISTANCE)) or 1.0)


def _floor(
    configured: float | None, embedder: Embedder | None, name: str = "relevance_floor"
) -> float:
    """The cosine floor of a vector leg: the configured one, else the model's own.

    Cosine scales differ between models, so a floor belongs to its model
    (``relevance_floor``, measured on LoCoMo: benchmarks/README.md); a model
    without one has no floor.
    """
    if configured is not None:
        return configured
    return float(getattr(embedder, name, -1.0)) if embedder is not None else -1.0
