"""Hybrid search over a namespace's index: analyse, plan, legs, fuse, re-rank.

``Searcher.search`` reads the query once (``analysis.QueryAnalysis``), plans
the search (``plan.SearchPlan``: filters, depth, the range's memories), runs
the legs (``legs.Legs``: one pipelined round trip, plus one for Chinese
queries, which the server segments first, and one for the contextual KNN once
its query embedding, computed in a thread meanwhile, is ready), fuses them
(``ranking.fuse``) and passes the hits through its re-rankers in order
(``rerank``: Chinese re-ranking, speaker boost, named things, time boost, lead-in,
newer-first, token budget). The hits' access is counted in the background (``access.HitCounter``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import numpy as np
from prometheus_client import Histogram
from redis.asyncio import Redis

from hindsight_redis.core.checks import check_max_tokens, check_search
from hindsight_redis.core.documents import hit_from_fields
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.core.requests import SearchRequest
from hindsight_redis.errors import EmbeddingMismatch, redis_errors
from hindsight_redis.index.gc import ensure_search_gc
from hindsight_redis.index.manager import IndexInfo, MemoryIndex, mismatch_message
from hindsight_redis.language import synonyms
from hindsight_redis.lifecycle.access import HitCounter
from hindsight_redis.providers.embedders import (
    CachedEmbedder,
    contextual_from_settings,
    embedder_from_settings,
)
from hindsight_redis.providers.multilingual import shared_model
from hindsight_redis.providers.projection import project
from hindsight_redis.providers.vectors import Embedder
from hindsight_redis.search.analysis import QueryAnalysis
from hindsight_redis.search.legs import LegRows, Legs
from hindsight_redis.search.plan import SearchPlan
from hindsight_redis.search.query import parse_explain
from hindsight_redis.search.ranking import Blend, Fusion, Mode, Ranked, fuse
from hindsight_redis.search.rerank.base import RerankContext, Reranker
from hindsight_redis.search.rerank.budget import TokenBudget
from hindsight_redis.search.rerank.chinese import ChineseRerank
from hindsight_redis.search.rerank.lead_in import LeadIn
from hindsight_redis.search.rerank.named_things import NamedThings
from hindsight_redis.search.rerank.newer_first import NewerFirst
from hindsight_redis.search.rerank.speaker import SpeakerBoost
from hindsight_redis.search.rerank.time_boost import TimeBoost
from hindsight_redis.search.term_stats import TermStats
from hindsight_redis.settings import SearchSettings, Settings

logger = logging.getLogger(__name__)


SEARCH_SECONDS = Histogram(
    "hindsight_search_seconds",
    "Time of one successful search through the public API.",
    ["namespace", "mode"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)


def observe_search(namespace: str, mode: str, seconds: float) -> None:
    """Record one search of ``namespace`` in ``mode`` that took ``seconds``."""
    SEARCH_SECONDS.labels(namespace=namespace, mode=mode).observe(seconds)


class Searcher:
    """Searches one namespace: holds the client, keys, search settings, embedders, index,
    legs and re-rankers."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        settings: SearchSettings,
        embedder: Embedder,
        info: IndexInfo,
        contextual: Embedder | None = None,
    ) -> None:
        """A searcher of ``info``'s index with ``embedder`` (and ``contextual``, for the
        contextual leg); ``settings``: the search group (``Settings.search``)."""
        self.redis = redis
        self.keys = keys
        self.settings = settings
        self.embedder = embedder
        self.info = info
        self.contextual = contextual
        self.legs = Legs(redis, keys, info, settings.hnsw_ef_runtime)
        # a Chinese query: its first candidates by the multilingual model
        self.chinese = ChineseRerank(redis, keys, shared_model(), settings.chinese_rerank_weight)
        self.rerankers: tuple[Reranker, ...] = (
            self.chinese,
            SpeakerBoost(),  # the turns of the person the question names
            NamedThings(),  # the memories naming things of the kind asked for
            TimeBoost(),
            LeadIn(redis, keys, info.alias),  # the turns telling when
            NewerFirst(),  # an open contradiction: the newer first
            TokenBudget(),
        )
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
        return cls(redis, keys, settings.search, embedder, info, contextual)

    async def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: Mode = "hybrid",
        filters: SearchFilters | None = None,
        fusion: Fusion | None = None,
        candidates: int | None = None,
        max_tokens: int | None = None,
        record_access: bool = True,
    ) -> list[SearchHit]:
        """Search the namespace; hits best first, each with its scores.

        The arguments are checked here (``InvalidQuery``), then ``run``. The
        client checks a search once, as a ``SearchRequest``, and calls ``run``.
        """
        request = SearchRequest(
            check_search(query, top_k, mode),
            top_k,
            mode,
            filters or SearchFilters(),
            check_max_tokens(max_tokens),
        )
        return await self.run(
            request, fusion=fusion, candidates=candidates, record_access=record_access
        )

    async def run(
        self,
        request: SearchRequest,
        *,
        fusion: Fusion | None = None,
        candidates: int | None = None,
        record_access: bool = True,
    ) -> list[SearchHit]:
        """Run a checked search: analyse the query once, plan, run the legs, fuse, then
        the re-rankers in order (Chinese re-ranking, speaker boost, named things, time boost,
        lead-in, newer first, token budget).

        ``fusion`` defaults to ``settings.hybrid_fusion``; ``candidates``, the
        depth of each leg, to ``max(settings.search_candidates, 4 * top_k)``.
        Queries with Chinese text skip the contextual leg (its model is
        English only). ``EmbeddingMismatch`` when the embedder differs from the
        index's. The hits returned are counted as read (in the background).
        """
        started = time.perf_counter()
        text, top_k, mode = request.query, request.top_k, request.mode
        info, embedder = self.info, self.embedder
        if embedder.model_id != info.model_id or embedder.dims != info.dims:
            raise EmbeddingMismatch(mismatch_message(info, embedder.model_id, embedder.dims))
        analysis = QueryAnalysis.of(text, time.time())
        plan = SearchPlan.make(
            analysis,
            self.settings,
            self.keys.namespace,
            top_k=top_k,
            mode=mode,
            filters=request.filters,
            candidates=candidates,
        )
        if self._has_context_leg(mode) and not analysis.chinese:
            plan.context_task = asyncio.create_task(self._embed_context(text))
        chinese_query = self.chinese.start(analysis)  # embedded while the legs run
        context = RerankContext(
            analysis, plan.time, top_k, plan.filters, request.max_tokens, chinese_query
        )
        try:
            with redis_errors("search"):
                try:
                    await self._query_terms(plan)
                    rows = await self.legs.rows(plan)
                    ranked = fuse(
                        self.legs.scores(rows, plan),
                        mode=mode,
                        blend=self._blend(fusion, chinese=analysis.chinese),
                        top_k=plan.pool,
                        query_vector=plan.query_vector,
                        context_vector=plan.context_vector(),
                    )
                finally:
                    plan.cancel_context()
                hits = self._hits(ranked, rows)
                for reranker in self.rerankers:
                    hits = await reranker.rerank(hits, context)
        finally:
            _settle(chinese_query)  # not needed (too few Chinese hits) or the search failed
        if record_access:
            self.hit_counter.count(hit.id for hit in hits)  # in the background
        self.term_stats.learn_later(self.redis, self.info.alias, plan.terms)
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

    def _blend(self, fusion: Fusion | None, *, chinese: bool = False) -> Blend:
        """How fusion weighs the legs: the search settings, the floors of the models.

        A Chinese query's static cosines run as low as cross-language ones (the
        model's floor was measured on English: it kept 61% of the Chinese
        development set's targets, the cross-language one 98%), so its floor is
        the cross-language one.
        """
        settings, embedder = self.settings, self.embedder
        floor = _floor(settings.search_min_vector, embedder)
        foreign = _floor(settings.search_min_vector, embedder, "cross_language_floor")
        return Blend(
            alpha=settings.hybrid_alpha,
            contextual_weight=settings.hybrid_contextual_weight,
            fusion=fusion or settings.hybrid_fusion,
            min_vector=min(floor, foreign) if chinese else floor,
            min_contextual=_floor(settings.search_min_contextual, self.contextual),
            min_vector_foreign=foreign,
            cross_language=settings.hybrid_cross_language,
        )

    async def _query_terms(self, plan: SearchPlan) -> None:
        """The plan's query vector (not for keyword searches) and keyword terms (not for
        vector searches; Han runs segmented by the server first, then widened with
        their synonyms: ``language.synonyms``). A query asking for a kind with known
        members ("instruments": ``QueryAnalysis.related``) has them in the text of its
        static vector and among its keyword terms, scored as synonyms."""
        analysis = plan.analysis
        if plan.mode != "keyword":
            vectors = await self.embedder.embed([analysis.vector_text])
            plan.query_vector = np.asarray(vectors[0], np.float32)
        if plan.mode != "vector":
            segmented = await self._segment(analysis) if analysis.chinese else None
            plan.terms = analysis.terms(segmented)
            found = synonyms.expand(plan.terms) if analysis.chinese else []
            found += [w for w in analysis.related_terms() if w not in plan.terms]
            if found:
                plan.terms += found
                plan.synonyms = set(found)
            plan.common = self.term_stats.common(plan.terms)

    async def _segment(self, analysis: QueryAnalysis) -> dict[str, list[str]]:
        """Chinese runs of the query, segmented into words by the server (friso).

        One round trip, for the runs ``analysis.runs_to_segment`` names.
        """
        runs = analysis.runs_to_segment()
        async with self.redis.pipeline(transaction=False) as pipe:
            for run in runs:
                pipe.execute_command(
                    "FT.EXPLAINCLI", self.info.alias, run, "LANGUAGE", "chinese", "DIALECT", "2"
                )
            replies = await pipe.execute()
        pairs = zip(runs, replies, strict=True)
        return {run: parse_explain(lines) or [run] for run, lines in pairs}

    async def _embed_context(self, query: str) -> np.ndarray:
        """The contextual query vector, projected as the index stores its vectors."""
        vectors = await self.contextual.embed([query])  # type: ignore[union-attr]
        return np.asarray(project(vectors, self.info.context_projection)[0])

    def _hits(self, ranked: Sequence[Ranked], rows: LegRows) -> list[SearchHit]:
        """The ranked memories as hits, from the fields their legs returned."""
        prefix = self.keys.doc_prefix
        fields = {
            row.key.removeprefix(prefix): row.fields
            for row in (*rows.contextual, *rows.keyword, *rows.vector)
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


def _settle(future: asyncio.Future[np.ndarray] | None) -> None:
    """Cancel ``future`` if it still runs; if it failed, take its error (it is not
    wanted: the re-ranking that needed it raised it already, or did not need it)."""
    if future is None:
        return
    if not future.done():
        future.cancel()
    elif not future.cancelled():
        future.exception()


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
