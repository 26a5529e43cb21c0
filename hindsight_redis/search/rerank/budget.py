"""Recall in a token budget: the hits an agent can paste into a prompt.

Pure module: no I/O. Counted with tiktoken's ``cl100k_base``, offline (the
encoding litellm ships). The last re-ranker: it only cuts.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.tokens import count_tokens
from hindsight_redis.search.rerank.base import RerankContext


def within_budget(hits: Sequence[SearchHit], max_tokens: int) -> list[SearchHit]:
    """The hits in rank order until the next one's content would pass ``max_tokens``."""
    kept: list[SearchHit] = []
    used = 0
    for hit in hits:
        used += count_tokens(hit.content)
        if used > max_tokens:
            break
        kept.append(hit)
    return kept


class TokenBudget:
    """The re-ranker of ``within_budget``: all the hits when the search has no budget."""

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """The hits within ``context.max_tokens`` (all of them without a budget)."""
        if context.max_tokens is None:
            return hits
        return within_budget(hits, context.max_tokens)
