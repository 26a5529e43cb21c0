"""A Chinese question: its first candidates re-ranked by a multilingual model.

"我平时咖啡里放什么奶" asks for "我喝咖啡不加糖，只加一点燕麦奶" in other words;
the keywords find it among the first candidates, rarely first, and the static
vectors of Chinese sentences tell little apart. multilingual-e5-small
(``providers.multilingual``) reads them as sentences: the first ``DEPTH``
candidates of a Chinese query are ranked by ``(1 - w) * minmax(fused) + w *
minmax(cosine)``, ``w`` = ``chinese_rerank_weight`` (0.7, chosen on the
development set: hit@1 0.83 -> 0.98 there, 0.76 -> 0.94 on the held-out one;
docs/decisions.md, "Chinese: a multilingual model re-ranks"). The candidates'
vectors were stored by the refiners (``CHINESE_FIELD``, one read); one not
stored yet, or stored for an older content, is embedded here. Only the Chinese
candidates move, among the places they held: the model ranks a Chinese text
above an English one that says the same (a Chinese question's English answers
fell from hit@5 0.80 to 0.60 when every candidate was re-ranked), and each
takes the fused score of its new place, so the scores stay in rank order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence

import numpy as np
from redis.asyncio import Redis

from hindsight_redis.core.documents import detect_language
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchHit
from hindsight_redis.errors import EmbeddingError
from hindsight_redis.providers import multilingual
from hindsight_redis.providers.multilingual import MultilingualE5
from hindsight_redis.search.analysis import QueryAnalysis
from hindsight_redis.search.ranking import min_max
from hindsight_redis.search.rerank.base import RerankContext

log = logging.getLogger(__name__)

DEPTH = 15
"""The candidates of a Chinese query the model re-ranks (10 to 20 gave the same on the
development set; each one not yet refined costs a few ms of the model)."""


def pool_size(top_k: int, analysis: QueryAnalysis, depth: int, weight: float) -> int:
    """How many fused candidates a Chinese query keeps for the re-ranking: ``top_k`` for
    other queries, or when it is off (``weight`` 0)."""
    wide = analysis.chinese and weight > 0
    return max(top_k, min(depth, DEPTH)) if wide else top_k


def blend(
    hits: Sequence[SearchHit], cosines: Mapping[int, float], weight: float
) -> list[SearchHit]:
    """``hits`` with the ones at the positions ``cosines`` names (position -> cosine)
    re-ordered among those positions by ``(1 - weight) * minmax(fused) + weight *
    minmax(cosine)``; each takes the fused score of the position it moves to, so the
    scores stay in rank order, and every other hit keeps its place."""
    slots = sorted(cosines)
    if len(slots) < 2:
        return list(hits)
    fused = min_max({i: hits[i].fused for i in slots})
    near = min_max(cosines)
    mixed = {i: (1 - weight) * fused[i] + weight * near[i] for i in slots}
    order = sorted(slots, key=lambda i: -mixed[i])  # stable: ties keep their order
    out = list(hits)
    for slot, i in zip(slots, order, strict=True):
        out[slot] = dataclasses.replace(hits[i], fused=hits[slot].fused)
    return out


class ChineseRerank:
    """The first re-ranker of a Chinese query: ``blend`` by the cosines of ``model``
    (None: off), weighing them ``weight``."""

    def __init__(
        self, redis: Redis, keys: Keys, model: MultilingualE5 | None, weight: float
    ) -> None:
        """Read the stored vectors of ``keys``' namespace through ``redis``."""
        self.redis = redis
        self.keys = keys
        self.model = model
        self.weight = weight

    def start(self, analysis: QueryAnalysis) -> asyncio.Future[np.ndarray] | None:
        """The query's embedding, started now so that it runs while the legs do
        (``RerankContext.chinese_query``); None for other queries, or when off."""
        if self.model is None or self.weight <= 0 or not analysis.chinese:
            return None
        return asyncio.ensure_future(self.model.embed_query(analysis.text))

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``hits`` with the first ``DEPTH`` re-ranked when the query is Chinese."""
        model = self.model
        if model is None or self.weight <= 0 or not context.analysis.chinese:
            return hits
        head = [i for i, h in enumerate(hits[:DEPTH]) if detect_language(h.content) == "chinese"]
        if len(head) < 2:
            return hits
        query_task = context.chinese_query or self.start(context.analysis)
        assert query_task is not None
        async with self.redis.pipeline(transaction=False) as pipe:
            for i in head:
                pipe.hget(self.keys.doc(hits[i].id), multilingual.CHINESE_FIELD)
            raws = await pipe.execute()
        vectors = {
            i: multilingual.unpack(hits[i].content, raw) for i, raw in zip(head, raws, strict=True)
        }
        missing = [i for i, v in vectors.items() if v is None]
        try:
            query = await query_task
            if missing:
                embedded = await model.embed([hits[i].content for i in missing])
                vectors.update(zip(missing, embedded, strict=True))
        except EmbeddingError as e:  # the model cannot load here: ranked as without it
            log.warning("Chinese search not re-ranked: %s", e)
            return hits
        cosines = {i: float(np.dot(v, query)) for i, v in vectors.items() if v is not None}
        return blend(hits, cosines, self.weight)
