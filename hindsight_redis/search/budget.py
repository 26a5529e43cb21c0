"""Recall in a token budget: the hits an agent can paste into a prompt.

Counted with tiktoken's ``cl100k_base``, offline (the encoding litellm ships).
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.tokens import count_tokens


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
