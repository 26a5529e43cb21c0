"""Time in the query as a soft signal: hits that happened then, or that say when, rank higher.

Pure module: no I/O. When a query names a date or a relative time
(``QueryAnalysis.time_range``: "in May 2023", "on 8 May", "last week", "去年"),
the hits whose ``occurred_at`` falls within it, widened by the slack on each
side (``search_date_slack_days``: a chat tells of an event some days after
it happened), get ``search_date_weight`` added to their fused score; the
``POOL`` best candidates per hit asked for are re-ranked so, then cut to
``top_k``. Hits without ``occurred_at`` keep their score. Measured on LoCoMo
(benchmarks/README.md): the questions naming a date gain, the others are
unchanged (no range, no change).

When a query asks for a time ("when did…", "how long…": ``answer_type``),
the candidates whose text tells one get ``search_time_answer_weight``: the
answer to a "when" is a memory that says when.

The candidates that queries about time need and their legs miss come from the
plan (the legs again over the range named: ``plan.candidate_window``) and the
lead-in re-ranker (the turns that tell when).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.answer_type import tells_time
from hindsight_redis.search.analysis import TimeQuery
from hindsight_redis.search.rerank.base import RerankContext

POOL = 4
"""Candidates re-ranked per hit asked for."""


def pool_size(top_k: int, query: TimeQuery, depth: int) -> int:
    """How many fused candidates to keep before ``boost``: ``top_k`` when it changes nothing."""
    return max(top_k, min(depth, POOL * top_k)) if query.active else top_k


def boost(hits: Sequence[SearchHit], query: TimeQuery, top_k: int) -> list[SearchHit]:
    """``hits`` re-ranked (the in-range ones gain ``query.weight``, the ones telling a
    time ``query.answer_weight`` when the query asks for one), the first ``top_k``.

    The boosted hits' ``fused`` score carries the gain, so scores stay in rank order.
    """
    if not query.active:
        return list(hits[:top_k])
    window = query.window
    low = window.start - query.slack_s if window is not None else 0.0
    high = window.end + query.slack_s if window is not None else 0.0

    def score(hit: SearchHit) -> float:
        gain = 0.0
        if window is not None and hit.occurred_at is not None and low <= hit.occurred_at < high:
            gain += query.weight
        if query.asks and tells_time(hit.content):
            gain += query.answer_weight
        return hit.fused + gain

    scored = [(score(h), h) for h in hits]  # once each: tells_time is a regex search
    scored.sort(key=lambda pair: pair[0], reverse=True)  # stable: ties keep their order
    return [h if s == h.fused else dataclasses.replace(h, fused=s) for s, h in scored[:top_k]]


class TimeBoost:
    """The first re-ranker: ``boost`` by the search's time signals, then the first ``top_k``
    (fusion kept ``pool_size`` candidates for it)."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``boost`` of ``hits`` by ``context.time``, cut to ``context.top_k``."""
        return boost(hits, context.time, context.top_k)
