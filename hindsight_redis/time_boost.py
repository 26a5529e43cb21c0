"""A date in the query as a soft signal: hits that happened then rank higher.

Pure module: no I/O. When a query names a date or a relative time
(``when.time_range``: "in May 2023", "on 8 May", "last week", "去年"), the hits
whose ``occurred_at`` falls within it, widened by ``SLACK_S`` on each side (a
chat tells of an event some days after it happened), get ``WEIGHT`` added to
their fused score; the ``POOL`` best candidates per hit asked for are
re-ranked so, then cut to ``top_k``. Hits without ``occurred_at`` keep their
score. Measured on LoCoMo (benchmarks/README.md): the questions naming a date
gain, the others are unchanged (no range, no change).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hindsight_redis.models import SearchHit
from hindsight_redis.when import TimeRange, time_range

WEIGHT = 0.2
"""Added to the fused score (0..1) of a hit that happened in the query's time range."""
SLACK_S = 7 * 86_400.0
"""How far outside the range a hit still counts as in it (seconds, each side)."""
POOL = 4
"""Candidates re-ranked per hit asked for."""


def query_window(query: str, now: float) -> TimeRange | None:
    """The time range ``query`` names (relative to ``now``), or None: nothing to boost."""
    return time_range(query, now)


def pool_size(top_k: int, window: TimeRange | None, depth: int) -> int:
    """How many fused candidates to keep before ``boost``: ``top_k`` without a window."""
    return top_k if window is None else max(top_k, min(depth, POOL * top_k))


def boost(hits: Sequence[SearchHit], window: TimeRange | None, top_k: int) -> list[SearchHit]:
    """``hits`` re-ranked by the window (the in-range ones gain ``WEIGHT``), the first ``top_k``.

    The boosted hits' ``fused`` score carries the gain, so scores stay in rank order.
    """
    if window is None:
        return list(hits[:top_k])
    low, high = window.start - SLACK_S, window.end + SLACK_S

    def score(hit: SearchHit) -> float:
        inside = hit.occurred_at is not None and low <= hit.occurred_at < high
        return hit.fused + WEIGHT if inside else hit.fused

    ranked = sorted(hits, key=score, reverse=True)[:top_k]  # stable: ties keep their order
    return [dataclasses.replace(h, fused=score(h)) if score(h) != h.fused else h for h in ranked]
