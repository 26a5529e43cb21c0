"""The speaker the question names: that person's own turns rank a little higher.

Pure module: no I/O. A chat turn written as "Melanie: ..." (``language.speaker``)
is Melanie's, and "What do Melanie's kids like?" is answered by what Melanie
said, often in several sessions, while the other speaker's turns about kids
share as many words. The hits whose speaker label the query names (a name among
``QueryAnalysis.names``; a Chinese label found in the query's text) get
``WEIGHT`` added to their fused score; fusion keeps ``POOL`` candidates per hit
asked for when the query names someone, so a turn just past ``top_k`` can come
in. A question about what two people share ("What movies have both Joanna and
Nate seen?") is answered by turns of each: there, each further turn of a speaker
costs ``BOTH_STEP`` (``balance``), so the top is not one person's alone. A
question asking for several things of a kind ("What books has Tim read?":
``QueryAnalysis.kind``) lists what that person did, told over many sessions, so
there the weight is ``LIST_WEIGHT``. Measured on LoCoMo (benchmarks/README.md, docs/decisions.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.core.text import has_han
from hindsight_redis.language.speaker import speaker_label
from hindsight_redis.search.analysis import QueryAnalysis
from hindsight_redis.search.rerank.base import RerankContext

WEIGHT = 0.06
"""Added to the fused score (0..1) of a turn of the speaker named; chosen on LoCoMo dev
(0.03 < 0.06 >= 0.1, 0.15, 0.2: the larger ones cost temporal questions)."""
BOTH_STEP = 0.03
"""Taken from the fused score of a turn per turn of its speaker ranked above it, in a
question asking what two people both did (``balance``); chosen on LoCoMo dev (0.01 <
0.03 = 0.06 = 0.1)."""
LIST_WEIGHT = 0.12
"""The weight instead of ``WEIGHT`` in a question asking for several things of a kind;
chosen on LoCoMo dev (docs/decisions.md)."""
POOL = 3
"""Candidates fusion keeps per hit asked for when the query names someone or a kind."""


def pool_size(top_k: int, analysis: QueryAnalysis, depth: int) -> int:
    """How many fused candidates the speaker boost and the named-things boost re-rank:
    ``top_k`` when the query names no one and asks for no kind."""
    wide = analysis.names or analysis.kind is not None
    return max(top_k, min(depth, POOL * top_k)) if wide else top_k


def named(label: str | None, analysis: QueryAnalysis) -> bool:
    """Whether the query names the speaker ``label`` (a name of it, or, for a Chinese
    label, its text)."""
    if not label:
        return False
    if has_han(label):
        return label in analysis.text
    return label in analysis.names or label.split(" ", 1)[0] in analysis.names


_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)


def boost(hits: Sequence[SearchHit], analysis: QueryAnalysis) -> list[SearchHit]:
    """``hits`` with the turns of a speaker the query names ``WEIGHT`` higher
    (``LIST_WEIGHT`` when it asks for several things of a kind), re-sorted (stable); as
    many as before."""
    if not analysis.names and not analysis.chinese:
        return list(hits)
    kind = analysis.kind
    weight = LIST_WEIGHT if kind is not None and kind.plural else WEIGHT
    scored = [
        (h.fused + weight if named(speaker_label(h.content), analysis) else h.fused, h)
        for h in hits
    ]
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [h if s == h.fused else dataclasses.replace(h, fused=s) for s, h in scored]


def balance(hits: Sequence[SearchHit], analysis: QueryAnalysis) -> list[SearchHit]:
    """``hits`` re-sorted (stable) with each turn ``BOTH_STEP`` lower per turn of its
    speaker ranked above it, when the query asks what two people both did ("both") and
    two speakers it names are among the hits; else unchanged. As many as before."""
    if not _BOTH.search(analysis.text):
        return list(hits)
    labels = [speaker_label(h.content) for h in hits]
    if len({label for label in labels if named(label, analysis)}) < 2:
        return list(hits)
    seen: dict[str | None, int] = {}
    scored = []
    for h, label in zip(hits, labels, strict=True):
        above = seen.get(label, 0)
        seen[label] = above + 1
        scored.append((h.fused - BOTH_STEP * above, h))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [h if s == h.fused else dataclasses.replace(h, fused=s) for s, h in scored]


class SpeakerBoost:
    """The first re-ranker: ``boost``, then ``balance`` (the time boost, next, cuts to
    ``top_k``)."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``balance`` of the ``boost`` of ``hits`` by the names of ``context.analysis``."""
        return balance(boost(hits, context.analysis), context.analysis)
