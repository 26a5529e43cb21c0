"""A question asking for things that have names: the memories that name something rank higher.

Pure module: no I/O. "What books has Tim read?" is answered by turns that
name a book ("Just finished "A Dance with Dragons""), "Which cities has John
been to?" by ones that name a city ("I was in Chicago"), and the words of the
question are often not in them. When the question asks for a kind whose members
have names (``QueryAnalysis.kind``, ``kinds.NAMED_KINDS``), the candidates that
name something (``kinds.names_something``: a title in quotes, a capitalized
word inside a sentence that is not a person the question names) get ``WEIGHT``
added to their fused score. It re-ranks the speaker boost's pool; the time
boost, next, cuts to ``top_k``. Measured on LoCoMo (docs/decisions.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.kinds import names_something
from hindsight_redis.search.analysis import QueryAnalysis
from hindsight_redis.search.rerank.base import RerankContext

WEIGHT = 0.06
"""Added to the fused score (0..1) of a memory naming something; chosen on LoCoMo dev."""


def boost(hits: Sequence[SearchHit], analysis: QueryAnalysis) -> list[SearchHit]:
    """``hits`` with the ones naming something ``WEIGHT`` higher when the query asks for
    a kind of named things, re-sorted (stable); as many as before."""
    kind = analysis.kind
    if kind is None or not kind.named:
        return list(hits)
    scored = [
        (h.fused + WEIGHT if names_something(h.content, analysis.names) else h.fused, h)
        for h in hits
    ]
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [h if s == h.fused else dataclasses.replace(h, fused=s) for s, h in scored]


class NamedThings:
    """After the speaker boost: ``boost`` by the kind the question asks for."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``boost`` of ``hits`` by ``context.analysis``."""
        return boost(hits, context.analysis)
