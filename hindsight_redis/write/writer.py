"""The write path: how accepted writes reach the stream.

A write without an idempotency key is one ``XADD`` behind a backlog gate
(re-checked at most every ``_GATE_TTL_S`` per client); a batch, or a write
with a key, is one Lua script call (``scripts.write_events``) that checks
idempotency and the backlog and appends atomically. Under the durable profile
the write is followed, in the same pipeline, by ``WAITAOF`` (the local AOF
fsync) and, on a cluster shard with replicas, ``WAIT 1`` (a replica has it):
both wait for the writes of their own connection, so all go on one. A writer's
first write also adds its namespace to
the prefix's registry (``keys.namespace_registry``), where workers serving
every namespace find it; later writes skip that.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from hindsight_redis.core.codec import EVENT_FIELD, decode_outcome, encode_event, encode_outcome
from hindsight_redis.core.keys import Keys, namespace_registry
from hindsight_redis.core.models import MemoryEvent, WriteReceipt
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import (
    Backpressure,
    ConfigError,
    RedisCommandError,
    RedisOutOfMemory,
    WriteTimeout,
    map_redis_error,
    redis_errors,
)
from hindsight_redis.redis import lua, scripts
from hindsight_redis.redis.cluster import on_shard_of, refresh_topology, replicas_of, replicated
from hindsight_redis.settings import WriteSettings
from hindsight_redis.write.backlog import backlog

_BLOCK_POLL_S = 0.05
_GATE_TTL_S = 0.05
_RETRY_ONE = "retry it (an idempotency_key makes retries exactly-once)"
_RETRY_KEYED = "retry with the same idempotency_key to stay exactly-once"


class StreamWriter:
    """Appends validated events to a namespace's stream; holds no connection.

    ``limits``: backpressure, the ``WAITAOF`` timeout, idempotency's TTL.
    """

    def __init__(self, limits: WriteSettings, keys: Keys) -> None:
        self.limits = limits
        self.keys = keys
        self._room_until = 0.0  # monotonic time until which the backlog gate is open
        self._registered = False  # the namespace is in the registry (set on the first write)
        self._script_sent = False  # a durable append sent write_events' source (loading it)

    def _deadline(self) -> float:
        return time.monotonic() + self.limits.backpressure_timeout_s

    async def append_one(
        self, redis: Redis, event: MemoryEvent, *, durable: bool = False
    ) -> WriteReceipt:
        """A single write without idempotency key: a plain XADD behind the backlog gate.

        The gate trusts a "there is room" answer for ``_GATE_TTL_S``, so a
        client does not pay a second command per write; at the limit it asks
        every time. The limit can thus be overshot by what clients write in
        that window, never by more.
        """
        if time.monotonic() >= self._room_until:
            await self._wait_for_room(redis, self._deadline())
        payload = encode_event(event)
        with redis_errors("write", hint=_RETRY_ONE):
            if self._registered and not durable:
                stream_id = await redis.xadd(self.keys.stream, {EVENT_FIELD: payload})
            else:  # the first write carries the registration in the same round trip
                pipe = redis.pipeline(transaction=False)
                pipe.xadd(self.keys.stream, {EVENT_FIELD: payload})
                if not self._registered:
                    pipe.sadd(namespace_registry(self.keys.prefix), self.keys.namespace)
                confirms = self._queue_confirmation(redis, pipe) if durable else 0
                replies = await pipe.execute(raise_on_error=False)
                stream_id, *registered = replies[: len(replies) - confirms]
                confirmations = replies[len(replies) - confirms :]
                if isinstance(stream_id, Exception):
                    raise stream_id
                # An accepted write is never reported as failed: a refused registration
                # (Redis reached maxmemory between the two) is tried again with the next.
                self._registered = not any(isinstance(r, Exception) for r in registered)
        if durable:
            await self._check_confirmation(redis, confirmations)
        return WriteReceipt(id=event.event_id, stream_id=as_text(stream_id))

    def _queue_confirmation(self, redis: Redis, pipe: Pipeline) -> int:
        """Queue what confirms the writes before it: ``WAITAOF 1 0`` (the local AOF fsync)
        and, on a cluster shard with replicas, ``WAIT 1`` (a replica has them; its own fsync
        follows at once under ``durable``, but ``WAITAOF 1 1`` would wait for the replica's
        once-a-second report). Both on the writes' connection; how many replies they add."""
        timeout_ms = self.limits.waitaof_timeout_ms
        route = on_shard_of(redis, self.keys.stream)
        pipe.execute_command("WAITAOF", 1, 0, timeout_ms, **route)
        if not replicas_of(redis, self.keys.stream):
            return 1
        pipe.execute_command("WAIT", 1, timeout_ms, **route)
        return 2

    async def _check_confirmation(self, redis: Redis, replies: Sequence[Any]) -> None:
        """``WriteTimeout`` unless the fsync (and a replica, when asked) confirmed the writes."""
        for reply in replies:
            if isinstance(reply, Exception):
                mapped = map_redis_error(reply, "confirm the AOF fsync")
                if isinstance(mapped, RedisCommandError):
                    raise ConfigError(
                        f"profile 'durable' needs appendonly yes on the server: {mapped.reply}; "
                        "run `hindsight-redis doctor`"
                    ) from reply
                raise mapped or reply from reply
        if int(replies[0][0]) < 1:
            raise WriteTimeout(
                "write accepted but the AOF fsync was not confirmed within "
                f"{self.limits.waitaof_timeout_ms} ms"
            )
        if len(replies) > 1 and int(replies[1]) < 1:
            await refresh_topology(redis)  # a replica gone: the next write waits for none
            raise WriteTimeout(
                "write accepted and fsynced, but no replica of its shard acknowledged it within "
                f"{self.limits.waitaof_timeout_ms} ms"
            )

    async def _append_durable(self, redis: Redis, call: dict[str, Any]) -> tuple[Any, list[Any]]:
        """``write_events`` and what confirms it in one pipeline: the script's reply and the
        confirmations. The writer's first call sends the script's source (which loads it),
        so no confirmation is spent on a refused call; the pipeline is sent again whole,
        with the source, if the server forgot the script since (``NOSCRIPT``)."""
        first = (
            scripts.write_events.queue if self._script_sent else scripts.write_events.queue_source
        )
        for queue in (first, scripts.write_events.queue_source):
            pipe = redis.pipeline(transaction=False)
            queue(pipe, **call)
            self._queue_confirmation(redis, pipe)
            reply, *confirmations = await pipe.execute(raise_on_error=False)
            if not lua.refused(reply):
                break
        self._script_sent = True
        if isinstance(reply, Exception):
            raise reply
        return reply, confirmations

    async def _register(self, redis: Redis) -> None:
        """Add the namespace to the registry, once per writer (after an accepted batch:
        refused at maxmemory, it is tried again with the next batch, never failing this)."""
        if not self._registered:
            with (
                contextlib.suppress(RedisOutOfMemory),
                redis_errors("register the namespace", hint=_RETRY_KEYED),
            ):
                await redis.sadd(namespace_registry(self.keys.prefix), self.keys.namespace)
                self._registered = True

    async def _wait_for_room(self, redis: Redis, deadline: float) -> None:
        while True:
            current = await backlog(redis, self.keys)
            if current < self.limits.max_backlog:
                self._room_until = time.monotonic() + _GATE_TTL_S
                return
            await self._refuse_or_pause(current, deadline)

    async def _refuse_or_pause(self, current_backlog: int, deadline: float) -> None:
        """Raise ``Backpressure`` (error mode, or past the deadline), else pause before a retry."""
        if self.limits.backpressure == "error" or time.monotonic() >= deadline:
            raise Backpressure(current_backlog, self.limits.max_backlog)
        await asyncio.sleep(_BLOCK_POLL_S)

    async def append(
        self,
        redis: Redis,
        events: Sequence[MemoryEvent],
        keyed: Sequence[bool],
        *,
        durable: bool = False,
    ) -> list[WriteReceipt]:
        """Append a batch with one script call: accepted whole, or not at all.

        ``keyed[i]`` says whether event ``i`` came with an idempotency key (its
        id is then derived from the key, and a repeat returns the first receipt).
        """
        deadline = self._deadline()
        payloads: list[bytes] = []
        for event, has_key in zip(events, keyed, strict=True):
            payloads += [encode_event(event), b"1" if has_key else b"0"]
        call: dict[str, Any] = {
            "stream": self.keys.stream,
            "stats": self.keys.stats,
            "idempotency": [self.keys.idempotency(e.event_id) for e in events],
            "max_backlog": self.limits.max_backlog,
            "idempotency_ttl_s": self.limits.idempotency_ttl_s,
            "events": payloads,
        }
        while True:
            with redis_errors("write", hint=_RETRY_KEYED):
                if durable:
                    reply, confirmations = await self._append_durable(redis, call)
                else:
                    reply = await scripts.write_events(redis, **call)
            if not isinstance(reply, bytes | str):
                if durable:
                    await self._check_confirmation(redis, confirmations)
                await self._register(redis)
                return [
                    WriteReceipt(
                        id=event.event_id, stream_id=answer[2:], duplicate=answer.startswith("d:")
                    )
                    for event, answer in zip(events, _texts(reply), strict=True)
                ]
            await self._refuse_or_pause(int(as_text(reply)[2:]), deadline)

    async def wait_outcome(
        self, redis: Redis, receipt: WriteReceipt, timeout_s: float
    ) -> WriteReceipt:
        """Wait until the worker committed this write; its final receipt."""
        deadline = time.monotonic() + timeout_s
        with redis_errors("wait for the write to be processed"):
            raw = await self._outcome(redis, receipt, deadline)
            if raw is not None:  # searches served by replicas must see it too
                outcome = decode_outcome(raw)
                record = (
                    self.keys.doc(receipt.id)
                    if outcome.get("status", "indexed") == "indexed"
                    else self.keys.outcome(receipt.id)
                )
                await replicated(redis, record, deadline - time.monotonic())
        if raw is None:
            raise WriteTimeout(
                f"write {receipt.id} was accepted but not processed within {timeout_s}s "
                "(are workers running? `hindsight-redis stats` shows the backlog)"
            )
        return WriteReceipt(
            id=receipt.id,
            status=str(outcome.get("status", "indexed")),
            stream_id=receipt.stream_id,
            reason=outcome.get("reason"),
            merged_into=outcome.get("merged_into"),
            duplicate=receipt.duplicate,
            conflicts_with=tuple(outcome.get("conflicts_with", ())),
            scored_by=outcome.get("scored_by"),
        )

    async def _outcome(
        self, redis: Redis, receipt: WriteReceipt, deadline: float
    ) -> bytes | str | None:
        """The outcome of the write once it exists, or None past the deadline."""
        raw = await self._recorded(redis, receipt)
        while raw is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if receipt.duplicate:  # the first write's waiter gets the notification
                await asyncio.sleep(min(_BLOCK_POLL_S, remaining))
                raw = await self._recorded(redis, receipt)
                continue
            popped = await redis.blpop([self.keys.notify(receipt.id)], timeout=min(remaining, 1.0))
            raw = popped[1] if popped else await self._recorded(redis, receipt)
        return raw

    async def _recorded(self, redis: Redis, receipt: WriteReceipt) -> bytes | str | None:
        """The outcome already recorded for the write, if any: the notification (the whole
        outcome; a duplicate leaves it to the first write's waiter), else the outcome key,
        else, for a write that became a memory (an indexed write has no outcome key: its
        memory records it), ``indexed``. One transaction: the commit script writes the
        memory and the notification together."""
        async with redis.pipeline(transaction=True) as pipe:
            if not receipt.duplicate:
                pipe.lpop(self.keys.notify(receipt.id))
            pipe.get(self.keys.outcome(receipt.id))
            pipe.exists(self.keys.doc(receipt.id))
            *found, indexed = await pipe.execute()
        raw: bytes | str | None = next((r for r in found if r is not None), None)
        if raw is None and indexed:
            raw = encode_outcome({"status": "indexed", "id": receipt.id})
        return raw


def _texts(reply: list[bytes | str]) -> list[str]:
    """The write script's replies as text (bytes from this client; str if decoding)."""
    return [r.decode() if isinstance(r, bytes) else r for r in reply]
