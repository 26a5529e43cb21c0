"""Time in the query as a soft signal: hits that happened then, or that say when, rank higher.

Pure module: no I/O. When a query names a date or a relative time
(``when.time_range``: "in May 2023", "on 8 May", "last week", "去年"), the hits
whose ``occurred_at`` falls within it, widened by ``SLACK_S`` on each side (a
chat tells of an event some days after it happened), get ``WEIGHT`` added to
their fused score; the ``POOL`` best candidates per hit asked for are
re-ranked so, then cut to ``top_k``. Hits without ``occurred_at`` keep their
score. Measured on LoCoMo (benchmarks/README.md): the questions naming a date
gain, the others are unchanged (no range, no change).

When a query asks for a time ("when did…", "how long…": ``answer_type``),
the candidates whose text tells one get ``ANSWER_WEIGHT``: the answer to a
"when" is a memory that says when.

The candidates that queries about time need and their legs miss come from
``time_search`` (the memories of the range named; the turns that tell when).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.language.answer_type import asks_time, tells_time
from hindsight_redis.language.when import TimeRange, time_range
from hindsight_redis.settings import Settings

WEIGHT = 0.2
"""Added to the fused score (0..1) of a hit that happened in the query's time range
(the default of ``search_date_weight``)."""
SLACK_S = 7 * 86_400.0
"""How far outside the range a hit still counts as in it (seconds, each side; the
default of ``search_date_slack_days``)."""
ANSWER_WEIGHT = 0.1
"""Added to the fused score of a hit that tells a time, when the query asks for one
(the default of ``search_time_answer_weight``)."""
POOL = 4
"""Candidates re-ranked per hit asked for."""


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """What a query says about time (the range it names, whether it asks for a time)
    and what each signal adds to a hit's fused score."""

    window: TimeRange | None
    asks: bool
    weight: float = WEIGHT
    slack_s: float = SLACK_S
    answer_weight: float = ANSWER_WEIGHT

    @property
    def active(self) -> bool:
        """Whether ``boost`` can change the order."""
        return (self.window is not None and self.weight > 0) or (
            self.asks and self.answer_weight > 0
        )


def time_query(
    query: str,
    now: float,
    *,
    weight: float = WEIGHT,
    slack_s: float = SLACK_S,
    answer_weight: float = ANSWER_WEIGHT,
) -> TimeQuery:
    """The time range ``query`` names (relative to ``now``) and whether it asks "when"."""
    window = time_range(query, now) if weight > 0 else None
    asks = answer_weight > 0 and asks_time(query)
    return TimeQuery(window, asks, weight, slack_s, answer_weight)


def configured(query: str, now: float, settings: Settings) -> TimeQuery:
    """``time_query`` with the weights and slack of ``settings`` (``search_date_*``,
    ``search_time_answer_weight``)."""
    return time_query(
        query,
        now,
        weight=settings.search_date_weight,
        slack_s=settings.search_date_slack_days * 86_400.0,
        answer_weight=settings.search_time_answer_weight,
    )


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
