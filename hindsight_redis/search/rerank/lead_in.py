"""The turns that said when: after the best hit of a question asking for a time.

A conversation tells when before it tells what ("something not so great
happened yesterday..." then "a car ran a red light and hit us"), and the best
hit of "when did the car hit them?" is the turn with the details, the query's
words. So a query asking for a time gets, right after its best hit, the
memories written just before it in its session at the same ``occurred_at``
that tell a time. Measured on LoCoMo (benchmarks/README.md, "Questions that
ask for a time"). One read of Redis, only for such queries.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.documents import HIT_ONLY_FIELDS, SCOPE_FIELDS, hit_from_fields
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.core.resp import NEVER_DECODE, as_text, search_rows
from hindsight_redis.index.filters import build_filter, visible
from hindsight_redis.language.answer_type import tells_time
from hindsight_redis.search.analysis import TimeQuery
from hindsight_redis.search.query import newest_command
from hindsight_redis.search.rerank.base import RerankContext

LEAD_IN = 2
"""How many memories written just before the best hit of a query asking for a time
are read (those telling a time follow the hit; 0: off). Chosen on LoCoMo dev: 1 < 2 = 3."""
UNDATED_WINDOW_S = 600.0
"""For a best hit without ``occurred_at``: only memories written in the 10 minutes before it."""
_ROW_FIELDS = (*SCOPE_FIELDS, *HIT_ONLY_FIELDS)  # what the legs return


async def lead_in(
    redis: Redis,
    keys: Keys,
    index: str,
    hits: list[SearchHit],
    query: TimeQuery,
    filters: SearchFilters,
) -> list[SearchHit]:
    """``hits`` with, right after the first, the memories written just before it in its
    session at its ``occurred_at`` (without one: in the ``UNDATED_WINDOW_S`` before it)
    that tell a time (at most ``LEAD_IN``), at its score; as many hits as before.
    Unchanged unless the query asks for a time."""
    if not (query.asks and hits and LEAD_IN):
        return hits
    best = hits[0]
    if not best.session_id or best.created_at <= 0:
        return hits
    # the legs return created_at rounded (12 digits: 10 ms); the hash has it exact
    exact = as_text(await redis.hget(keys.doc(best.id), "created_at")) or repr(best.created_at)
    scope = dataclasses.replace(filters, session_id=best.session_id)
    since = "-inf" if best.occurred_at is not None else repr(float(exact) - UNDATED_WINDOW_S)
    expr = f"{build_filter(keys.namespace, scope)} @created_at:[{since} ({exact}]"
    if best.occurred_at is not None:  # the same moment (the legs round it too)
        expr += f" @occurred_at:[{best.occurred_at - 1.0!r} {best.occurred_at + 1.0!r}]"
    reply: Any = await redis.execute_command(  # type: ignore[no-untyped-call]
        *newest_command(index, expr, LEAD_IN, _ROW_FIELDS), **NEVER_DECODE
    )
    found = {h.id: h for h in hits}
    lead = []
    for row in search_rows(reply):
        memory_id = row.key.removeprefix(keys.doc_prefix)
        if memory_id == best.id or not visible(row.fields, keys.namespace, filters):
            continue
        hit = found.get(memory_id) or hit_from_fields(memory_id, row.fields, fused=0.0)
        if tells_time(hit.content):
            lead.append(dataclasses.replace(hit, fused=best.fused))
    if not lead:
        return hits
    moved = {h.id for h in lead}
    return [best, *lead, *(h for h in hits[1:] if h.id not in moved)][: len(hits)]


class LeadIn:
    """The re-ranker of ``lead_in`` on one index (``index``: its alias)."""

    def __init__(self, redis: Redis, keys: Keys, index: str) -> None:
        """Read the memories of ``keys``' namespace through ``redis`` and ``index``."""
        self.redis = redis
        self.keys = keys
        self.index = index

    async def rerank(self, hits: list[SearchHit], context: RerankContext) -> list[SearchHit]:
        """``lead_in`` of ``hits`` for the time signals and filters of ``context``."""
        return await lead_in(self.redis, self.keys, self.index, hits, context.time, context.filters)
