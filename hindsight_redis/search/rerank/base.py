"""What a re-ranker is, and what it reads of the search it re-ranks."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.search.analysis import QueryAnalysis, TimeQuery


@dataclass(frozen=True, slots=True)
class RerankContext:
    """One search as the re-rankers read it: its query (``analysis``), the query's time
    signals under the settings (``time``), the hits asked for (``top_k``), the filters,
    the token budget (``max_tokens``, None: none) and the multilingual embedding of a
    Chinese query, started while the legs ran (``chinese_query``; None: not started)."""

    analysis: QueryAnalysis
    time: TimeQuery
    top_k: int
    filters: SearchFilters
    max_tokens: int | None = None
    chinese_query: asyncio.Future[np.ndarray] | None = None


class Reranker(Protocol):
    """One step after fusion: the hits, re-ordered (or cut, or with a few added)."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``hits`` (best first) re-ranked for the search of ``context``."""
        ...
