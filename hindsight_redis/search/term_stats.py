"""Document frequencies of query terms, learned from searches: which terms select.

RediSearch 2.10 scores every document that matches any term of a union (no
top-k pruning), so a keyword query with a term found in a quarter of 100,000
memories scores 25,000 documents. Like Lucene's common-terms query, the
keyword leg lets only the rarest terms select documents: the rarest first,
while their counts add up to at most a budget (``keyword_common_share`` of
the index's memories, at least ``keyword_common_min_docs``), and always the
rarest one. Every other term still adds its BM25 score to the documents the
selecting terms found (``query.keyword_query``), but selects none itself.
The best BM25 matches contain the rare terms, so the top of the ranking
barely moves while the server scores a few thousand documents instead of
tens of thousands (benchmarks/README.md, "Keyword leg at 100,000").

Frequencies come from the server (``FT.SEARCH ... LIMIT 0 0`` counts a term's
matches) in the background after a search, so no search waits for them: a
term not counted yet is treated as rare, and the terms that matter (common
ones) recur across queries and are counted first. Counts are kept for
``ttl_s`` seconds, at most ``max_terms`` of them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.fields import TEXT_FIELD
from hindsight_redis.core.resp import reply_map, search_total

logger = logging.getLogger(__name__)


class TermStats:
    """Cached document frequencies of one index's query terms (no I/O but ``learn``)."""

    def __init__(
        self,
        *,
        common_share: float,
        common_min_docs: int,
        ttl_s: float = 600.0,
        max_terms: int = 20_000,
    ) -> None:
        self.common_share = common_share
        self.common_min_docs = common_min_docs
        self.ttl_s = ttl_s
        self.max_terms = max_terms
        self._counts: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._num_docs: tuple[float, int] | None = None
        self._learning: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references

    def _fresh(self, entry: tuple[float, int] | None, now: float) -> int | None:
        if entry is None or now - entry[0] > self.ttl_s:
            return None
        return entry[1]

    def common(self, terms: Sequence[str], now: float | None = None) -> set[str]:
        """The terms that only score: all but the rarest ones whose counts add up to the
        budget (the rarest always selects; terms not counted yet select as rare)."""
        now = time.monotonic() if now is None else now
        num_docs = self._fresh(self._num_docs, now)
        if num_docs is None or self.common_share >= 1.0:
            return set()
        budget = max(self.common_share * num_docs, self.common_min_docs)
        unique = dict.fromkeys(terms)
        counted = sorted(
            (count, term)
            for term in unique
            if (count := self._fresh(self._counts.get(term), now)) is not None
        )
        selecting = len(counted) < len(unique)  # a term not counted yet selects
        spent = 0
        for n, (count, _) in enumerate(counted):
            if selecting and spent + count > budget:
                return {term for _, term in counted[n:]}
            spent += count
            selecting = True
        return set()

    def unknown(self, terms: Sequence[str], now: float | None = None) -> list[str]:
        """The terms without a fresh count (and not being counted)."""
        now = time.monotonic() if now is None else now
        return [
            t
            for t in terms
            if t not in self._learning and self._fresh(self._counts.get(t), now) is None
        ]

    def to_count(self, terms: Sequence[str], now: float | None = None) -> list[str]:
        """The terms a search should count: unknown ones, unless the index is too small
        for any term to be common (at most ``common_min_docs`` memories)."""
        now = time.monotonic() if now is None else now
        num_docs = self._fresh(self._num_docs, now)
        if num_docs is not None and num_docs <= self.common_min_docs:
            return []
        return self.unknown(terms, now)

    def needs_size(self, now: float | None = None) -> bool:
        """Whether the index's size is unknown or stale."""
        now = time.monotonic() if now is None else now
        return self._fresh(self._num_docs, now) is None

    def record(
        self, counts: dict[str, int], num_docs: int | None, now: float | None = None
    ) -> None:
        """Keep counts (and the index's size), evicting the oldest beyond ``max_terms``."""
        now = time.monotonic() if now is None else now
        for term, count in counts.items():
            self._counts[term] = (now, count)
            self._counts.move_to_end(term)
        while len(self._counts) > self.max_terms:
            self._counts.popitem(last=False)
        if num_docs is not None:
            self._num_docs = (now, num_docs)

    def learn_later(self, redis: Redis, index: str, terms: Sequence[str]) -> None:
        """Count the terms without a fresh count (and the index's size when stale) in a
        background task: no search waits for it."""
        unknown = self.to_count(terms)
        if unknown or (terms and self.needs_size()):
            task = asyncio.create_task(self.learn(redis, index, unknown))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Cancel the counts in flight (before their connection closes)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def learn(self, redis: Redis, index: str, terms: Sequence[str]) -> None:
        """Count ``terms`` (and the index's size when stale) in one round trip."""
        size = self.needs_size()
        if not terms and not size:
            return
        self._learning.update(terms)
        try:
            async with redis.pipeline(transaction=False) as pipe:
                for term in terms:
                    pipe.execute_command(
                        "FT.SEARCH",
                        index,
                        f"@{TEXT_FIELD}:({term})",
                        "LIMIT",
                        "0",
                        "0",
                        "DIALECT",
                        "2",
                    )
                if size:
                    pipe.execute_command("FT.INFO", index)
                replies: list[Any] = await pipe.execute(raise_on_error=False)
            counts = {
                term: search_total(reply)
                for term, reply in zip(terms, replies, strict=False)
                if not isinstance(reply, Exception)
            }
            num_docs = _num_docs(replies[-1]) if size else None
            self.record(counts, num_docs)
        except Exception as e:  # a cache: the next search tries again
            logger.debug("could not count query terms: %s", e)
        finally:
            self._learning.difference_update(terms)


def _num_docs(reply: Any) -> int | None:
    if isinstance(reply, Exception):
        return None
    value = reply_map(reply).get("num_docs")
    return None if value is None else int(float(value))
