"""The legs of a search on one index: the rows each returns, and their scores for fusion.

The static vector KNN, the keyword leg (BM25 over optional terms:
``query.keyword_query``) and the index generation check go in one pipelined
round trip, sent while the contextual query embedding runs in a thread; the
contextual KNN follows once its query vector is ready. Every leg returns its
candidates' hit fields and vectors, so fusion orders them and the hits are
built without another read. A query naming a range runs the legs on that
range's memories too, at the same time (``SearchPlan.window_expr``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from redis.asyncio import Redis

from hindsight_redis.core.documents import HIT_ONLY_FIELDS as _HIT_ONLY
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import NEVER_DECODE, SearchRow, as_text, search_rows
from hindsight_redis.core.vectors import vector_bytes
from hindsight_redis.errors import EmbeddingMismatch, RedisCommandError, map_redis_error
from hindsight_redis.index.filters import visible
from hindsight_redis.index.manager import IndexInfo
from hindsight_redis.search.plan import SearchPlan
from hindsight_redis.search.query import (
    DISTANCE,
    is_selective,
    keyword_command,
    keyword_query,
    knn_command,
)
from hindsight_redis.search.ranking import LegScores

logger = logging.getLogger(__name__)

# The contextual leg adds what the others miss: 10-50 gave the same LoCoMo recall.
CONTEXT_DEPTH = 20


@dataclass(slots=True)
class LegRows:
    """The rows each leg returned, post-filtered."""

    vector: list[SearchRow]
    keyword: list[SearchRow]
    contextual: list[SearchRow]
    full: bool  # a leg returned as many rows as it asked for

    def joined(self, more: LegRows) -> LegRows:
        """These rows, then those of ``more`` not among them, leg by leg."""
        return LegRows(
            vector=_union(self.vector, more.vector),
            keyword=_union(self.keyword, more.keyword),
            contextual=_union(self.contextual, more.contextual),
            full=self.full,
        )


class Legs:
    """Runs the legs of a plan on one index (``info``) of the namespace of ``keys``."""

    def __init__(self, redis: Redis, keys: Keys, info: IndexInfo, ef_runtime: int) -> None:
        """Legs through ``redis``; ``ef_runtime``: the HNSW search breadth of the KNNs."""
        self.redis = redis
        self.keys = keys
        self.info = info
        self.ef_runtime = ef_runtime

    async def rows(self, plan: SearchPlan) -> LegRows:
        """The rows of the plan's legs, and of the same legs over the memories of the
        range the query names (run at the same time), each memory once."""
        if plan.window_expr is None:
            return await self._filtered(plan)
        rows, more = await asyncio.gather(self._filtered(plan), self._once(plan, plan.window_expr))
        return rows.joined(more)

    def scores(self, rows: LegRows, plan: SearchPlan) -> LegScores:
        """Each leg's scores by memory id, and the vectors the legs returned."""
        prefix = self.keys.doc_prefix
        static_field = self.info.vector_field
        scores = LegScores(keyword_complete=len(rows.keyword) < plan.depth)
        query_script = plan.analysis.script
        # Every memory a leg kept, and the vectors returned with it (static, contextual).
        kept: list[SearchRow] = [*rows.vector, *rows.contextual]
        for row in rows.vector:
            scores.cosine[row.key.removeprefix(prefix)] = _similarity(row)
        for row in rows.contextual:
            scores.context[row.key.removeprefix(prefix)] = _similarity(row)
        for row in rows.keyword:
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

    async def _filtered(self, plan: SearchPlan) -> LegRows:
        """The legs, post-filtered by the default filters.

        Default filters (active, shared) match nearly everything: they are
        post-filtered, and pre-filtered only when that leaves too few hits.
        """
        pre = is_selective(plan.filters)
        while True:
            legs = await self._once(plan, plan.filter_expr if pre else None)
            found = {r.key for r in (*legs.vector, *legs.keyword, *legs.contextual)}
            if pre or not legs.full or len(found) >= plan.top_k:
                return legs
            pre = True

    async def _once(self, plan: SearchPlan, filter_expr: str | None) -> LegRows:
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
            kw_query = keyword_query(
                plan.terms, filter_expr, common=plan.common, synonyms=plan.synonyms
            )
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
                        self.ef_runtime,
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
        return LegRows(
            vector=[r for r in vector_rows if visible(r.fields, *scope)],
            keyword=[r for r in keyword_rows if visible(r.fields, *scope)],
            contextual=[
                r
                for r in await self._contextual_rows(plan, filter_expr)
                if visible(r.fields, *scope)
            ],
            full=plan.depth in (len(vector_rows), len(keyword_rows)),
        )

    async def _contextual_rows(self, plan: SearchPlan, filter_expr: str | None) -> list[SearchRow]:
        """The contextual KNN's rows; none without the leg or its query vector."""
        context = await _context_query(plan)
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
                    self.ef_runtime,
                    also=(*_HIT_ONLY, info.vector_field),
                ),
                **NEVER_DECODE,
            )
        except Exception as e:  # mapped; a refusal: the alias moved to an index without the field
            self._raise_leg_error(e, contextual=True)
        return search_rows(reply)

    def _check_generation(self, reply: Any) -> None:
        if isinstance(reply, Exception):
            raise reply  # mapped by the boundary
        generation = as_text(reply)
        if generation and int(generation) != self.info.generation:
            raise EmbeddingMismatch(
                f"index {self.info.alias} was rebuilt (generation {generation}, this "
                f"client has {self.info.generation}); open the index again"
            )

    def _raise_leg_error(self, error: Exception, *, contextual: bool) -> NoReturn:
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


async def _context_query(plan: SearchPlan) -> np.ndarray | None:
    """The contextual query vector; None without the leg, or when the model failed."""
    if plan.context_task is None:
        return None
    try:
        return await plan.context_task
    except Exception as e:  # a broken contextual model must not break search
        logger.warning("contextual query embedding failed (%s); searching without it", e)
        plan.context_task = None
        return None


def _union(first: Sequence[SearchRow], second: Sequence[SearchRow]) -> list[SearchRow]:
    seen = {row.key for row in first}
    return [*first, *(row for row in second if row.key not in seen)]


def _similarity(row: SearchRow) -> float:
    """The cosine of a KNN row (the leg returns its distance, ``1 - cosine``)."""
    return 1.0 - float(as_text(row.fields.get(DISTANCE)) or 1.0)
