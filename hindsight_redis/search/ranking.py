"""Pure ranking: score scaling, fusion of the search legs, the final order.

No I/O, no Redis. The searcher collects what each leg found (``LegScores``:
cosines of the static vector, BM25 scores, cosines of the contextual vector,
and the raw vectors the legs returned), and ``fuse`` turns them into the
ranked top k, each with the scores that ranked it. Hybrid search blends the
legs linearly by default (``linear_blend``; it beat reciprocal rank fusion on
LoCoMo, see benchmarks/README.md), or with ``rrf``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import numpy as np

from hindsight_redis.core.vectors import datatype_of, vectors_from_bytes

K = TypeVar("K", bound=Hashable)
Fusion = Literal["linear", "rrf"]
Mode = Literal["hybrid", "vector", "keyword"]


def rrf(rankings: Sequence[Sequence[str]], *, k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over each ranking."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return scores


def min_max(scores: Mapping[K, float], *, floor: float | None = None) -> dict[K, float]:
    """Scores scaled to 0..1 (all 1.0 when they are equal).

    ``floor`` caps the low end (``min(floor, lowest)``): with ``floor=0`` a
    top-k list of BM25 scores is scaled as if the unmatched rest of the
    collection, scoring 0, had been included.
    """
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if floor is not None:
        low = min(low, floor)
    if high - low <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def linear_blend(
    vector: Mapping[str, float],
    keyword: Mapping[str, float],
    *,
    alpha: float,
    keyword_complete: bool = False,
    contextual: Mapping[str, float] | None = None,
    contextual_weight: float = 0.0,
) -> dict[str, float]:
    """``alpha * minmax(cosine) + (1 - alpha) * minmax0(bm25)`` over the candidate lists.

    Cosines are min-max scaled over ``vector``, BM25 scores over
    ``keyword`` with 0 as the low end (``min_max(floor=0)``). A
    document missing from one list gets that list's lowest scaled score: it
    ranked below every candidate there, but is not known to be unrelated.
    (On LoCoMo this beat raw cosines, z-scores and a missing score of 0.)
    With ``keyword_complete`` (the keyword leg returned every match, fewer
    than it asked for) a document missing from it matches no query term and
    gets 0: otherwise, in a small pool, a text sharing no word with the
    query would inherit the keyword credit of the weakest real match.

    With ``contextual`` cosines, the blend is ``w * minmax(contextual) +
    (1 - w) * (the blend above)``, ``w = contextual_weight``. A document
    without a contextual score (not refined yet) is ranked by the blend
    above alone, as if its contextual score agreed with it: a memory written
    a second ago must not lose to unrelated refined ones.
    """
    if not 0.0 <= alpha <= 1.0 or not 0.0 <= contextual_weight <= 1.0:
        raise ValueError("alpha and contextual_weight must be between 0 and 1")
    vec = min_max(vector)
    kw = min_max(keyword, floor=0.0)
    ctx = min_max(contextual or {})
    vec_low = min(vec.values(), default=0.0)
    kw_low = 0.0 if keyword_complete else min(kw.values(), default=0.0)
    weight = contextual_weight if ctx else 0.0
    fused = {}
    for doc_id in dict.fromkeys([*vector, *keyword, *(contextual or {})]):
        base = alpha * vec.get(doc_id, vec_low) + (1 - alpha) * kw.get(doc_id, kw_low)
        fused[doc_id] = weight * ctx.get(doc_id, base) + (1 - weight) * base
    return fused


def top(scores: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` ids with the highest scores (ties by id, for stable output)."""
    return sorted(scores, key=lambda d: (-scores[d], d))[:n]


def cosines(
    vectors: Mapping[str, bytes], query: np.ndarray | None, known: Mapping[str, float]
) -> dict[str, float]:
    """Cosines of stored vectors (float32 or float16) with the (unit) query vector.

    Ids already in ``known``, and vectors of another size (a memory not
    refined yet has none), are skipped; a stored vector's datatype is told by
    its size (``providers.vectors.datatype_of``); one matrix product for the rest.
    """
    if query is None:
        return {}
    by_type: dict[str, list[str]] = {}
    for d, raw in vectors.items():
        datatype = datatype_of(raw, len(query)) if d not in known else None
        if datatype is not None:
            by_type.setdefault(datatype, []).append(d)
    found: dict[str, float] = {}
    for datatype, ids in by_type.items():
        matrix = vectors_from_bytes([vectors[d] for d in ids], datatype)
        found.update(zip(ids, (matrix @ query).tolist(), strict=True))
    return found


@dataclass(slots=True)
class LegScores:
    """What the search legs found, by memory id.

    ``cosine`` and ``context`` hold the cosines the vector legs computed,
    ``bm25`` the keyword leg's scores; ``static_vectors`` and
    ``context_vectors`` the vectors the legs returned with their candidates,
    so every candidate gets both cosines whichever leg found it.
    """

    cosine: dict[str, float] = field(default_factory=dict)
    bm25: dict[str, float] = field(default_factory=dict)
    context: dict[str, float] = field(default_factory=dict)
    static_vectors: dict[str, bytes] = field(default_factory=dict)
    context_vectors: dict[str, bytes] = field(default_factory=dict)
    keyword_complete: bool = False
    foreign: set[str] = field(default_factory=set)
    """Memories in another script than the query (Chinese for an English query...)."""


@dataclass(frozen=True, slots=True)
class Ranked:
    """One memory of the final order, with the scores that ranked it.

    ``keyword`` is BM25 scaled to 0..1 over the candidates (0 as the low end),
    ``bm25`` the raw score.
    """

    id: str
    fused: float
    vector: float | None
    keyword: float | None
    contextual: float | None
    bm25: float | None = None


@dataclass(frozen=True, slots=True)
class Blend:
    """How hybrid search weighs its legs, and what it takes for a memory to be a hit.

    A memory is returned only when some leg vouches for it: a keyword match
    (BM25 > 0), a static cosine of at least ``min_vector``, or a contextual
    cosine of at least ``min_contextual``. The floors are applied after
    fusion, so they never reorder what they keep.

    ``cross_language``: a memory in another script than the query cannot be
    matched by the keyword leg (nor by the English-only contextual one), so
    it ranks by the better of the blend and its scaled cosine alone, and its
    cosine floor is ``min_vector_foreign`` (cross-language cosines of the
    static model run lower).
    """

    alpha: float
    contextual_weight: float
    fusion: Fusion = "linear"
    min_vector: float = -1.0  # -1: no floor
    min_contextual: float = -1.0
    min_vector_foreign: float = -1.0
    cross_language: bool = False


def fuse(
    legs: LegScores,
    *,
    mode: Mode,
    blend: Blend,
    top_k: int,
    query_vector: np.ndarray | None = None,
    context_vector: np.ndarray | None = None,
) -> list[Ranked]:
    """The top ``top_k`` memories for ``mode``, best first.

    Candidates found by one leg get the other vectors' cosines from the
    vectors the legs returned (``query_vector``, ``context_vector``).
    """
    cosine = {**legs.cosine, **cosines(legs.static_vectors, query_vector, legs.cosine)}
    context = {**legs.context, **cosines(legs.context_vectors, context_vector, legs.context)}
    bm25 = legs.bm25
    keyword = min_max(bm25, floor=0.0)
    if mode == "vector":
        fused = dict(cosine)
    elif mode == "keyword":
        fused = dict(keyword)
    elif blend.fusion == "rrf":
        rankings = [top(cosine, len(cosine)), top(bm25, len(bm25))]
        fused = rrf([*rankings, top(context, len(context))] if context else rankings)
    else:
        fused = linear_blend(
            cosine,
            bm25,
            alpha=blend.alpha,
            keyword_complete=legs.keyword_complete,
            contextual=context or None,
            contextual_weight=blend.contextual_weight,
        )
        if blend.cross_language and legs.foreign:
            scaled = min_max(cosine)
            for d in legs.foreign & fused.keys():
                fused[d] = max(fused[d], scaled.get(d, 0.0))

    def vouched(d: str) -> bool:
        if mode == "keyword":
            return True  # only matches come back from the keyword leg
        floor = blend.min_vector
        if blend.cross_language and d in legs.foreign:
            floor = min(floor, blend.min_vector_foreign)
        if d in cosine and cosine[d] >= floor:
            return True
        if mode == "vector":
            return False
        # A leg vouches only for what it scored.
        return d in bm25 or (d in context and context[d] >= blend.min_contextual)

    kept = {d: score for d, score in fused.items() if vouched(d)}
    return [
        Ranked(d, kept[d], cosine.get(d), keyword.get(d), context.get(d), bm25.get(d))
        for d in top(kept, top_k)
    ]
