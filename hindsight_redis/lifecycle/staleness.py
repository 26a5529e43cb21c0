"""The stale fraction: the share of active memories a threshold sweep would archive.

Read from a sample, so that ``stats`` and ``/metrics`` stay cheap whatever the
namespace's size: up to ``size`` active memories (all of them when there are no
more), their scored fields returned by ``FT.SEARCH`` in a few pages at random
offsets, scored by the sweeps' own function (``retention.score_fields``) with the
reads not folded in yet, and counted as a sweep picks (``retention.pick_victims``:
unprotected and under the threshold).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text, search_rows, search_total
from hindsight_redis.errors import RedisCommandError, SearchModuleMissing, redis_errors
from hindsight_redis.index.filters import tag_clause
from hindsight_redis.lifecycle.retention import (
    SCORED_FIELDS,
    RetentionPolicy,
    pick_victims,
    score_fields,
)

SAMPLE_SIZE = 1000
_PAGES = 4  # a large namespace is sampled in this many pages, one per stretch of the index


@dataclass(frozen=True, slots=True)
class StaleSample:
    """How many sampled active memories score under the sweep threshold."""

    sampled: int
    stale: int
    active: int
    """Active memories in the namespace when sampled."""
    threshold: float

    @property
    def fraction(self) -> float | None:
        """The stale share of the sample; None when there was no active memory."""
        return self.stale / self.sampled if self.sampled else None

    @property
    def exact(self) -> bool:
        """Whether the sample was every active memory."""
        return self.sampled >= self.active

    def as_dict(self) -> dict[str, Any]:
        """The sample as plain data (``stats``' ``health.stale``)."""
        return {
            "fraction": self.fraction,
            "stale": self.stale,
            "sampled": self.sampled,
            "active": self.active,
            "threshold": self.threshold,
            "exact": self.exact,
        }


def sample_offsets(total: int, size: int, pages: int, rng: random.Random) -> list[tuple[int, int]]:
    """``(offset, count)`` pages sampling ``size`` of ``total`` rows: all of them when
    ``total <= size``, else one page at a random offset in each of ``pages`` equal stretches."""
    if total <= size:
        return [(0, total)] if total else []
    per = max(size // pages, 1)
    stretch = total // pages
    return [(n * stretch + rng.randrange(max(stretch - per, 0) + 1), per) for n in range(pages)]


async def sample_staleness(
    redis: Redis,
    keys: Keys,
    policy: RetentionPolicy,
    threshold: float,
    *,
    size: int = SAMPLE_SIZE,
    now: float | None = None,
    rng: random.Random | None = None,
) -> StaleSample | None:
    """The stale share of up to ``size`` active memories; None without an index."""
    now = time.time() if now is None else now
    query = f"{tag_clause('namespace', keys.namespace)} {tag_clause('status', 'active')}"
    search = ("FT.SEARCH", keys.index_alias, query)
    returned = ("RETURN", str(len(SCORED_FIELDS)), *SCORED_FIELDS)
    try:
        with redis_errors("sample the memories' retention scores"):
            counted = await redis.execute_command(  # type: ignore[no-untyped-call]
                *search, "LIMIT", "0", "0", "DIALECT", "2"
            )
            total = search_total(counted)
            pipe = redis.pipeline(transaction=False)
            for offset, count in sample_offsets(total, size, _PAGES, rng or random.Random()):
                pipe.execute_command(
                    *search, *returned, "LIMIT", str(offset), str(count), "DIALECT", "2"
                )
            pages = await pipe.execute()
            found: dict[str, list[str | None]] = {}
            for page in pages:
                for row in search_rows(page):
                    values = [row.fields.get(name) for name in SCORED_FIELDS]
                    found[row.key] = [None if v is None else as_text(v) for v in values]
            ids = [key.removeprefix(keys.doc_prefix) for key in found]
            hits = await redis.hmget(keys.access_log, ids) if ids else []
    except (RedisCommandError, SearchModuleMissing):
        return None  # no index yet (or no search module)
    if not found:
        return StaleSample(0, 0, total, threshold)
    parts, protected = score_fields(
        policy, list(found.values()), pending_hits=[int(h or 0) for h in hits], now=now
    )
    stale = len(pick_victims(parts.score, protected, threshold=threshold, max_active=None))
    return StaleSample(len(found), stale, total, threshold)
