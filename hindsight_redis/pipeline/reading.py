"""How a worker's round reads its entries: the reclaimed ones (idle too long) of the
namespaces due, else the new ones of every served stream, at most a batch per namespace.

One ``XREADGROUP`` per chunk of streams (``_CHUNK``); over many namespaces a chunk's read
takes at most ``_READ_AHEAD_ENTRIES`` entries and a namespace that got all it asked for
tops up alone. Every entry read is added to the round's ``Lease``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TypeVar

import redis.asyncio as aioredis

from hindsight_redis.errors import RedisCommandError, redis_errors
from hindsight_redis.pipeline.consumer import NamespaceConsumer
from hindsight_redis.pipeline.namespaces import ServedNamespaces
from hindsight_redis.pipeline.streams import Entry, Lease, read_group
from hindsight_redis.settings import Settings

_T = TypeVar("_T")
_CHUNK = 256  # streams per XREADGROUP
# Serving many namespaces: a chunk's read takes at most this many entries (the rest tops
# up). Not a multiple of worker_batch_size: with batches of 256, rounds twice as large
# drained 200 namespaces ~10% slower (docs/decisions.md, "Batches of 256").
_READ_AHEAD_ENTRIES = 512


class RoundReader:
    """Reads a worker's rounds from the streams of the namespaces it serves."""

    def __init__(
        self,
        name: str,
        settings: Settings,
        served: ServedNamespaces,
        stopping: asyncio.Event,
        *,
        multi: bool,
    ) -> None:
        """Read as consumer ``name`` of the ``served`` namespaces until ``stopping``;
        ``multi``: the worker serves several namespaces (or every one)."""
        self.name = name
        self.settings = settings
        self.served = served
        self.stopping = stopping
        self.multi = multi

    async def reclaim(
        self, redis: aioredis.Redis, consumers: list[NamespaceConsumer], lease: Lease
    ) -> dict[str, list[tuple[str, int]]]:
        """Ids of entries idle too long with the delivery each is up for, by namespace
        (kept leased; ``NamespaceConsumer.claim`` takes them to run).

        Alone, a worker reclaims every round; serving many namespaces, each
        every quarter of ``claim_idle_ms`` (an idle entry waits that long anyway).
        """
        every_s = self.settings.claim_idle_ms / 4000 if self.multi else 0.0
        now = time.monotonic()
        due = [c for c in consumers if now - c.last_reclaim >= every_s]
        pipe = redis.pipeline(transaction=False)
        for consumer in due:
            consumer.queue_reclaim(pipe)
        # One round trip for all; a stream deleted meanwhile fails alone (the read notices).
        replies = await pipe.execute(raise_on_error=not self.multi) if due else []
        reclaimed: dict[str, list[tuple[str, int]]] = {}
        for consumer, reply in zip(due, replies, strict=True):
            ids = [] if isinstance(reply, Exception) else await consumer.reclaimed(reply)
            if ids:
                reclaimed[consumer.namespace] = ids
                lease.add(consumer.keys.stream, [entry_id for entry_id, _ in ids])
        return reclaimed

    async def read_new(
        self,
        redis: aioredis.Redis,
        consumers: list[NamespaceConsumer],
        lease: Lease,
        block_ms: int | None,
    ) -> tuple[dict[str, list[Entry]], set[str]]:
        """New entries by namespace, at most a batch each (fewer over many namespaces),
        and the namespaces that got all they asked for (and may have more)."""
        batch = self.settings.worker_batch_size
        chunks = [consumers[i : i + _CHUNK] for i in range(0, len(consumers), _CHUNK)]
        # Idle so far: block on each chunk in turn, for a share of block_ms.
        block = max(1, block_ms // len(chunks)) if block_ms and chunks else None
        batches: dict[str, list[Entry]] = {}
        full: set[str] = set()
        for chunk in chunks:
            count = max(1, min(_READ_AHEAD_ENTRIES // len(chunk), batch))
            found = await self.read(redis, chunk, count, block)
            for namespace, entries in found.items():
                batches.setdefault(namespace, []).extend(entries)
                lease.add(self.served.consumers[namespace].keys.stream, [i for i, _ in entries])
                if len(entries) >= count:
                    full.add(namespace)
            if found:
                block = None
        return batches, full

    async def top_up(
        self, redis: aioredis.Redis, consumer: NamespaceConsumer, count: int, lease: Lease
    ) -> list[Entry]:
        """Up to ``count`` more new entries of a namespace that had more than its share read."""
        if self.stopping.is_set():
            return []  # stopping: finish what was read, read no more
        more = (await self.read(redis, [consumer], count, None)).get(consumer.namespace, [])
        lease.add(consumer.keys.stream, [i for i, _ in more])
        return more

    async def read(
        self,
        redis: aioredis.Redis,
        consumers: list[NamespaceConsumer],
        count: int,
        block: int | None,
    ) -> dict[str, list[Entry]]:
        """New entries of each consumer's stream (at most ``count`` each), by namespace."""
        # ">" reads new entries; "0" re-reads a consumer's own pending ones,
        # which after an outage need no wait for claim_idle_ms.
        streams = {}
        for consumer in consumers:
            streams[consumer.keys.stream] = "0" if consumer.own_pending_first else ">"
            consumer.own_pending_first = False
        try:
            with redis_errors("read the streams"):
                found = await read_group(redis, self.name, streams, count=count, block_ms=block)
        except RedisCommandError as e:
            if "NOGROUP" not in e.reply:
                raise
            await self.served.lost(redis, consumers)
            return {}
        owners = self.served.by_stream
        return {owners[s].namespace: e for s, e in found.items() if s in owners}


def reclaimed_chunks(
    reclaimed: Sequence[tuple[_T, int]], *, batch_size: int, max_deliveries: int
) -> list[list[_T]]:
    """Reclaimed entries (each with the delivery it is up for) in the batches they run in.

    An entry is reclaimed because the consumer holding it died or failed
    while it was in hand, and it may be what killed the process (a crash in
    a model, the kernel's OOM killer). Run with a whole batch again, it would
    take every batch-mate through ``max_deliveries`` deaths to the dead
    letters. So on its second delivery it runs with at most a sixteenth of a
    batch, and from its third (or its last, when fewer are allowed) alone,
    after the others: an entry that kills its worker is dead-lettered by
    itself, and its batch-mates are indexed.
    """
    alone_from = min(3, max_deliveries)
    small = max(1, batch_size // 16)
    rest = [entry for entry, delivery in reclaimed if delivery < alone_from]
    singles = [[entry] for entry, delivery in reclaimed if delivery >= alone_from]
    return [rest[i : i + small] for i in range(0, len(rest), small)] + singles
