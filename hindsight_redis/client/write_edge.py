"""What the client does to a write before it reaches the stream: its secrets screened, the
writes dropped for a secret recorded.

``AsyncMemoryClient`` holds one ``WriteEdge``, built from its settings once (``secrets``
of ``settings.trust``; ``trust.edge`` says what each policy does and why it runs here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import WriteReceipt
from hindsight_redis.core.requests import WriteRequest
from hindsight_redis.errors import InvalidArgument
from hindsight_redis.settings import Settings
from hindsight_redis.trust.edge import Screened, record_edge_drops, screen, screen_many

Provenance = Literal["token"]
"""What a service may say of how it identified a write's caller (``identified_by``)."""


def identified(identified_by: object) -> Provenance | None:
    """``identified_by`` once checked: None or ``token``."""
    if identified_by is None or identified_by == "token":
        return identified_by
    raise InvalidArgument(f"identified_by must be 'token' or None, got {identified_by!r}")


class WriteEdge:
    """The secrets policy of one client's writes."""

    def __init__(self, settings: Settings, keys: Keys) -> None:
        self.policy = settings.trust.secrets
        self.keys = keys
        self.outcome_ttl_s = settings.worker.outcome_ttl_s
        self.idempotency_ttl_s = settings.write.idempotency_ttl_s

    def screen(self, fields: Mapping[str, Any]) -> Screened | None:
        """One write's fields under the policy; None when they hold no secret."""
        return None if self.policy == "keep" else screen(fields, self.policy)

    def screen_items(self, given: list[Mapping[str, Any]]) -> dict[int, Screened]:
        """The items of a batch holding secrets, by position, each replaced in ``given``
        by its masked fields (``Screened.restored`` gives a held one back as written)."""
        found = screen_many(given, self.policy)
        for n, verdict in found.items():
            given[n] = verdict.masked
        return found

    async def drop(
        self, redis: Redis, requests: Sequence[WriteRequest], screened: Sequence[Screened]
    ) -> list[WriteReceipt]:
        """Record writes dropped for their secrets (``secrets=drop``): never on the stream."""
        return await record_edge_drops(
            redis,
            self.keys,
            [(r.event, s.kinds, r.keyed) for r, s in zip(requests, screened, strict=True)],
            outcome_ttl_s=self.outcome_ttl_s,
            idempotency_ttl_s=self.idempotency_ttl_s,
        )

    async def with_drops(
        self,
        redis: Redis,
        requests: Sequence[WriteRequest],
        screened: Mapping[int, Screened],
        receipts: Sequence[WriteReceipt],
    ) -> list[WriteReceipt]:
        """A batch's receipts in order: ``receipts`` (of the appended items) with those of
        the items dropped for a secret, recorded now, in their places."""
        dropped = [n for n, verdict in screened.items() if verdict.dropped]
        if not dropped:
            return list(receipts)
        drops = await self.drop(
            redis, [requests[n] for n in dropped], [screened[n] for n in dropped]
        )
        by_item = dict(zip(dropped, drops, strict=True))
        appended = iter(receipts)
        return [by_item[n] if n in by_item else next(appended) for n in range(len(requests))]
