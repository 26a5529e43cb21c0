"""The newer-first rule: of two memories flagged as contradicting each other, the newer first.

Pure module: no I/O. Two contradicting memories (``conflicts_with``) stay
until someone decides (``lifecycle.conflicts``); until then a search that
asks about the present ranks the newer of the two first, when it answers
about as well (``comparable``). A question about the past ("what was...",
"before", "以前": ``QueryAnalysis.about_the_past``) keeps the legs' order: the
contradiction is the answer, not a stale copy of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.search.rerank.base import RerankContext

COSINE_MARGIN = 0.05
"""How far below the older memory's cosine the newer one's may be and still rank first."""
BM25_SHARE = 0.9
"""The share of the older memory's BM25 the newer one needs to rank first."""


def _in_conflict(a: SearchHit, b: SearchHit) -> bool:
    return b.id in a.conflicts_with or a.id in b.conflicts_with


def comparable(newer: SearchHit, older: SearchHit) -> bool:
    """Whether ``newer`` answers the question about as well as ``older``, leg by leg.

    The raw scores, not ``fused`` (min-max scaling over a few candidates turns
    a cosine 0.003 lower into a whole weight lower): each cosine at most
    ``COSINE_MARGIN`` below, BM25 at least ``BM25_SHARE`` of the older's.
    """
    for new, old in ((newer.vector, older.vector), (newer.contextual, older.contextual)):
        if new is not None and old is not None and new < old - COSINE_MARGIN:
            return False
    return not older.bm25 or (newer.bm25 or 0.0) >= BM25_SHARE * older.bm25


def prefer_newer(hits: Sequence[SearchHit], *, about_the_past: bool) -> list[SearchHit]:
    """``hits`` with the newer of each unresolved conflicting pair ranked above the older.

    Only when the newer is ``comparable`` (a query that names the old fact, or
    is its very text, keeps it first), and not for a question ``about_the_past``.
    Only the order within the hits changes: the same memories come back, so
    recall at k is untouched.
    """
    ordered = list(hits)
    if len(ordered) < 2 or not any(h.conflicts_with for h in ordered):
        return ordered
    if about_the_past:
        return ordered
    i = 0
    while i < len(ordered):
        hit = ordered[i]
        newer = [
            j
            for j in range(i + 1, len(ordered))
            if _in_conflict(hit, ordered[j])
            and ordered[j].created_at > hit.created_at
            and comparable(ordered[j], hit)
        ]
        if newer:  # the newest partner takes this place; it is checked in turn
            j = max(newer, key=lambda n: ordered[n].created_at)
            ordered.insert(i, ordered.pop(j))
            continue
        i += 1
    return ordered


class NewerFirst:
    """The re-ranker of ``prefer_newer``, for the question of the search."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``prefer_newer`` of ``hits``, unless the query asks about the past."""
        return prefer_newer(hits, about_the_past=context.analysis.about_the_past)
