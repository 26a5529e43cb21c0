"""One search, planned: what its legs ask for, over which memories, and how deep.

No I/O. ``SearchPlan.make`` turns the query's analysis, the arguments and
``SearchSettings`` into what the legs need: the filter expression, the depth
of each leg, the pool fusion keeps for the re-rankers (the time and speaker
boosts and the Chinese re-ranking need more than ``top_k``:
``rerank.time_boost.pool_size``, ``rerank.speaker.pool_size``,
``rerank.chinese.pool_size``) and, for a query naming
a range, the filter of its memories (``window_expr``): the legs run on them
too (``legs.Legs.rows``), since the unfiltered legs rank by words and "I
finally finished my screenplay" shares none with "What did Joanna achieve in
January 2022?". The searcher fills in the rest as it goes: the query vector,
the keyword terms once the server segmented the Han runs, the contextual
query embedding running meanwhile.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from dataclasses import field as dataclass_field

import numpy as np

from hindsight_redis.core.models import SearchFilters
from hindsight_redis.index.filters import build_filter
from hindsight_redis.search.analysis import QueryAnalysis, TimeQuery
from hindsight_redis.search.ranking import Mode
from hindsight_redis.search.rerank import chinese, speaker, time_boost
from hindsight_redis.settings import SearchSettings


@dataclass(slots=True)
class SearchPlan:
    """One search, as the legs need it (the first fields fixed by ``make``, the last
    filled in by the searcher before the legs run)."""

    analysis: QueryAnalysis
    time: TimeQuery
    top_k: int
    mode: Mode
    filters: SearchFilters
    filter_expr: str
    window_expr: str | None  # the memories of the range the query names; None: no range
    depth: int  # rows per leg
    pool: int  # candidates fusion keeps for the re-rankers
    query_vector: np.ndarray | None = None
    terms: list[str] = dataclass_field(default_factory=list)
    common: set[str] = dataclass_field(default_factory=set)  # terms that only score (term_stats)
    synonyms: set[str] = dataclass_field(default_factory=set)  # terms scored below the words
    context_task: asyncio.Task[np.ndarray] | None = None

    @classmethod
    def make(
        cls,
        analysis: QueryAnalysis,
        settings: SearchSettings,
        namespace: str,
        *,
        top_k: int,
        mode: Mode,
        filters: SearchFilters,
        candidates: int | None = None,
    ) -> SearchPlan:
        """The plan of a search of ``namespace``; ``candidates``, the depth of each leg,
        defaults to ``max(settings.search_candidates, 4 * top_k)``."""
        time = TimeQuery.of(analysis, settings)
        depth = max(candidates or max(settings.search_candidates, 4 * top_k), top_k)
        window = candidate_window(time, filters)
        window_expr = None
        if window is not None:
            scope = dataclasses.replace(filters, occurred_since=window[0], occurred_until=window[1])
            window_expr = build_filter(namespace, scope)
        return cls(
            analysis=analysis,
            time=time,
            top_k=top_k,
            mode=mode,
            filters=filters,
            filter_expr=build_filter(namespace, filters),
            window_expr=window_expr,
            depth=depth,
            pool=max(
                time_boost.pool_size(top_k, time, depth),
                speaker.pool_size(top_k, analysis, depth),
                chinese.pool_size(top_k, analysis, depth, settings.chinese_rerank_weight),
            ),
        )

    def context_vector(self) -> np.ndarray | None:
        """The contextual query vector if it is ready (and did not fail), else None."""
        task = self.context_task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()

    def cancel_context(self) -> None:
        """Stop the contextual query embedding if it still runs (the search is over)."""
        if self.context_task is not None and not self.context_task.done():
            self.context_task.cancel()


def candidate_window(query: TimeQuery, filters: SearchFilters) -> tuple[float, float] | None:
    """The ``occurred_at`` range (unix seconds, inclusive) whose memories join the
    candidates of ``query``: its time range widened by the slack, within the filters'
    own ``occurred_since``/``occurred_until``; None without a range, or when none is left."""
    window = query.window
    if window is None or query.weight <= 0:
        return None
    low, high = window.start - query.slack_s, window.end + query.slack_s
    if filters.occurred_since is not None:
        low = max(low, filters.occurred_since)
    if filters.occurred_until is not None:
        high = min(high, filters.occurred_until)
    return (low, high) if low <= high else None
