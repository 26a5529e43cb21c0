"""A question asking for things that have names: the memories that name something rank higher.

Pure module: no I/O. "What books has Tim read?" is answered by turns that
name a book ("Just finished "A Dance with Dragons""), "Which cities has John
been to?" by ones that name a city ("I was in Chicago"), and the words of the
question are often not in them. When the question asks for a kind whose members
have names (``QueryAnalysis.kind``, ``kinds.NAMED_KINDS``), the candidates that
name something (``kinds.names_something``: a title in quotes, a capitalized
word inside a sentence that is not a person the question names) get ``WEIGHT``
added to their fused score. When the kind has usual members ("instruments":
piano, violin...; ``QueryAnalysis.related``, ``kind_members.members``), the
candidates naming one (``kind_members.mentions_member``) get ``MEMBER_WEIGHT``.
It re-ranks the speaker boost's pool; the time boost, next, cuts to ``top_k``.
Measured on LoCoMo (docs/decisions.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.kind_members import mentions_member
from hindsight_redis.language.kinds import names_something
from hindsight_redis.search.analysis import QueryAnalysis
from hindsight_redis.search.rerank.base import RerankContext

WEIGHT = 0.06
"""Added to the fused score (0..1) of a memory naming something; chosen on LoCoMo dev."""
MEMBER_WEIGHT = 0.07
"""Added to the fused score of a memory naming a usual member of the kind asked for;
chosen on LoCoMo dev (0.04 < 0.06 = 0.07 = 0.08 > 0.1: the middle of the plateau)."""


def boost(hits: Sequence[SearchHit], analysis: QueryAnalysis) -> list[SearchHit]:
    """``hits`` with the ones naming something ``WEIGHT`` higher when the query asks for
    a kind of named things, and the ones naming a member of the kind ``MEMBER_WEIGHT``
    higher, re-sorted (stable); as many as before."""
    kind, related = analysis.kind, analysis.related
    named = kind is not None and kind.named
    if not named and not related:
        return list(hits)

    def score(hit: SearchHit) -> float:
        gain = WEIGHT if named and names_something(hit.content, analysis.names) else 0.0
        if mentions_member(hit.content, related):
            gain += MEMBER_WEIGHT
        return hit.fused + gain

    scored = [(score(h), h) for h in hits]
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [h if s == h.fused else dataclasses.replace(h, fused=s) for s, h in scored]


class NamedThings:
    """After the speaker boost: ``boost`` by the kind the question asks for."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``boost`` of ``hits`` by ``context.analysis``."""
        return boost(hits, context.analysis)
