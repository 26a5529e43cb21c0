"""Commands over the streams of many namespaces: one read, one lease, one drained check.

``read_group`` reads several streams of the ``workers`` group in one
``XREADGROUP`` (at most ``count`` entries from each); on a cluster, one per
hash slot, pipelined per shard (``XREADGROUP`` takes the keys of one slot
only). ``Lease`` keeps the entries a worker read claimed while they wait or
are processed: slow LLM calls, big batches, or a round over many namespaces
can hold an entry longer than ``claim_idle_ms``, so every third of it the worker re-claims
what it holds (``XCLAIM ... JUSTID``, one pipelined call), resetting the
entries' idle time, and no other worker reclaims and redoes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis.core.keys import GROUP
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import RedisUnavailable, redis_errors
from hindsight_redis.redis.cluster import by_slot, node_of

Entry = tuple[str, dict[bytes, bytes]]
_POLL_S = 0.025  # a blocking read over several cluster slots asks again this often


async def read_group(
    redis: aioredis.Redis,
    consumer: str,
    streams: Mapping[str, str],
    *,
    count: int,
    block_ms: int | None,
) -> dict[str, list[Entry]]:
    """Entries of each stream (``">"``: new ones; ``"0"``: the consumer's own pending ones),
    by stream; streams without entries are left out."""
    slots = by_slot(redis, streams)
    if len(slots) > 1:
        return await _read_slots(redis, consumer, streams, slots, count=count, block_ms=block_ms)
    ids: dict[Any, Any] = dict(streams)
    reply = await redis.xreadgroup(GROUP, consumer, ids, count=count, block=block_ms or None)
    return _found(reply)


async def _read_slots(
    redis: aioredis.Redis,
    consumer: str,
    streams: Mapping[str, str],
    slots: list[list[str]],
    *,
    count: int,
    block_ms: int | None,
) -> dict[str, list[Entry]]:
    """``read_group`` over the streams of several cluster slots: one ``XREADGROUP`` per
    slot, in one pipeline per shard (a round trip each, at once). Blocking would take a
    connection per slot, so a blocking read asks again every ``_POLL_S`` until ``block_ms``.

    A pipeline per shard, not one for all: a shard failing over makes the cluster client
    send its pipeline again, and a pipeline of every shard sent again would read ``">"``
    anew on the healthy shards too, leaving the entries the first attempt delivered there
    pending, unseen until reclaimed (``claim_idle_ms``) while their namespaces went on.
    One shard's error is raised once the others' reads are done (a worker then re-reads
    its own pending entries first)."""
    shards: dict[str, list[list[str]]] = {}
    for slot in slots:
        shards.setdefault(node_of(redis, slot[0]) or "", []).append(slot)

    async def read(shard: list[list[str]]) -> list[Any]:
        pipe = redis.pipeline(transaction=False)
        for slot in shard:
            pipe.xreadgroup(GROUP, consumer, {s: streams[s] for s in slot}, count=count)
        return await pipe.execute()

    deadline = time.monotonic() + (block_ms or 0) / 1000
    while True:
        found: dict[str, list[Entry]] = {}
        replies = await asyncio.gather(*map(read, shards.values()), return_exceptions=True)
        for shard_replies in replies:
            if isinstance(shard_replies, BaseException):
                raise shard_replies
            for reply in shard_replies:
                found.update(_found(reply))
        remaining = deadline - time.monotonic()
        if found or remaining <= 0:
            return found
        await asyncio.sleep(min(_POLL_S, remaining))


def _found(reply: Any) -> dict[str, list[Entry]]:
    """The entries of an ``XREADGROUP`` reply, by stream (streams without any left out)."""
    replies: Any = reply or []
    if isinstance(replies, dict):  # RESP3 replies map stream -> entries
        replies = list(replies.items())
    found: dict[str, list[Entry]] = {}
    for stream, items in replies:
        # A pending entry deleted from the stream comes back without fields.
        entries = [(as_text(entry_id), fields) for entry_id, fields in items if fields]
        if entries:
            found[as_text(stream)] = entries
    return found


async def all_drained(redis: aioredis.Redis, streams: Sequence[str]) -> bool:
    """True when every entry of every stream was delivered to ``workers`` and acknowledged."""
    if not streams:
        return True
    pipe = redis.pipeline(transaction=False)
    for stream in streams:
        pipe.xinfo_groups(stream)
    for groups in await pipe.execute(raise_on_error=False):  # no stream: nothing to drain
        for info in groups if isinstance(groups, list) else []:
            if as_text(info["name"]) == GROUP and (
                int(info["pending"]) or int(info.get("lag") or 0)
            ):
                return False
    return True


class Lease:
    """Renews the claim of ``consumer`` on the entries ``add``-ed, until the block exits."""

    def __init__(self, redis: aioredis.Redis, consumer: str, claim_idle_ms: int) -> None:
        self._redis = redis
        self._consumer = consumer
        self._interval_s = claim_idle_ms / 3000
        self._held: dict[str, list[Any]] = {}  # stream -> entry ids
        self._done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def add(self, stream: str, entry_ids: Sequence[str]) -> None:
        """Hold ``entry_ids`` of ``stream`` too (read after the lease began)."""
        if entry_ids:
            self._held.setdefault(stream, []).extend(entry_ids)
            if self._task is None:
                self._task = asyncio.create_task(self._renew())

    async def __aenter__(self) -> Lease:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Signal, don't cancel: a cancel landing inside the Redis client can
        # be swallowed there, and awaiting such a task would hang the worker.
        self._done.set()
        if self._task is not None:
            finished, _ = await asyncio.wait({self._task}, timeout=5.0)
            if not finished:
                self._task.cancel()

    async def _renew(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._done.wait(), self._interval_s)
            if self._done.is_set():
                return
            with contextlib.suppress(RedisUnavailable), redis_errors("renew the lease"):
                pipe = self._redis.pipeline(transaction=False)
                for stream, ids in self._held.items():
                    pipe.xclaim(
                        stream,
                        GROUP,
                        self._consumer,
                        min_idle_time=int(self._interval_s * 500),
                        message_ids=ids,
                        justid=True,
                    )
                await pipe.execute(raise_on_error=False)  # a stream deleted meanwhile: skip it
