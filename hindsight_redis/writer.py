"""The write path: how accepted writes reach the stream.

A write without an idempotency key is one ``XADD`` behind a backlog gate
(re-checked at most every ``_GATE_TTL_S`` per client); a batch, or a write
with a key, is one Lua script call (``scripts.write_events``) that checks
idempotency and the backlog and appends atomically. The durable profile then
waits for the AOF fsync. A writer's first write also adds its namespace to
the prefix's registry (``keys.namespace_registry``), where workers serving
every namespace find it; later writes skip that.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from redis.asyncio import Redis

from hindsight_redis import scripts
from hindsight_redis.admin import backlog
from hindsight_redis.codec import EVENT_FIELD, decode_outcome, encode_event
from hindsight_redis.errors import (
    Backpressure,
    ConfigError,
    RedisCommandError,
    WriteTimeout,
    redis_errors,
)
from hindsight_redis.keys import Keys, namespace_registry
from hindsight_redis.models import MemoryEvent, WriteReceipt
from hindsight_redis.resp import as_text
from hindsight_redis.settings import Settings

_BLOCK_POLL_S = 0.05
_GATE_TTL_S = 0.05
_RETRY_ONE = "retry it (an idempotency_key makes retries exactly-once)"
_RETRY_KEYED = "retry with the same idempotency_key to stay exactly-once"


class StreamWriter:
    """Appends validated events to a namespace's stream; holds no connection."""

    def __init__(self, settings: Settings, keys: Keys) -> None:
        self.settings = settings
        self.keys = keys
        self._room_until = 0.0  # monotonic time until which the backlog gate is open
        self._registered = False  # the namespace is in the registry (set on the first write)

    def _deadline(self) -> float:
        return time.monotonic() + self.settings.backpressure_timeout_s

    async def append_one(self, redis: Redis, event: MemoryEvent) -> WriteReceipt:
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
            if self._registered:
                stream_id = await redis.xadd(self.keys.stream, {EVENT_FIELD: payload})
            else:  # the first write carries the registration in the same round trip
                pipe = redis.pipeline(transaction=False)
                pipe.xadd(self.keys.stream, {EVENT_FIELD: payload})
                pipe.sadd(namespace_registry(self.keys.prefix), self.keys.namespace)
                stream_id, _ = await pipe.execute()
                self._registered = True
        return WriteReceipt(id=event.event_id, stream_id=as_text(stream_id))

    async def _register(self, redis: Redis) -> None:
        """Add the namespace to the registry, once per writer."""
        if not self._registered:
            with redis_errors("register the namespace", hint=_RETRY_KEYED):
                await redis.sadd(namespace_registry(self.keys.prefix), self.keys.namespace)
            self._registered = True

    async def _wait_for_room(self, redis: Redis, deadline: float) -> None:
        while True:
            current = await backlog(redis, self.keys)
            if current < self.settings.max_backlog:
                self._room_until = time.monotonic() + _GATE_TTL_S
                return
            await self._refuse_or_pause(current, deadline)

    async def _refuse_or_pause(self, current_backlog: int, deadline: float) -> None:
        """Raise ``Backpressure`` (error mode, or past the deadline), else pause before a retry."""
        if self.settings.backpressure == "error" or time.monotonic() >= deadline:
            raise Backpressure(current_backlog, self.settings.max_backlog)
        await asyncio.sleep(_BLOCK_POLL_S)

    async def append(
        self, redis: Redis, events: Sequence[MemoryEvent], keyed: Sequence[bool]
    ) -> list[WriteReceipt]:
        """Append a batch with one script call: accepted whole, or not at all.

        ``keyed[i]`` says whether event ``i`` came with an idempotency key (its
        id is then derived from the key, and a repeat returns the first receipt).
        """
        deadline = self._deadline()
        payloads: list[bytes] = []
        for event, has_key in zip(events, keyed, strict=True):
            payloads += [encode_event(event), b"1" if has_key else b"0"]
        while True:
            with redis_errors("write", hint=_RETRY_KEYED):
                reply = await scripts.write_events(
                    redis,
                    stream=self.keys.stream,
                    stats=self.keys.stats,
                    idempotency=[self.keys.idempotency(e.event_id) for e in events],
                    max_backlog=self.settings.max_backlog,
                    idempotency_ttl_s=self.settings.idempotency_ttl_s,
                    events=payloads,
                )
            if not isinstance(reply, bytes | str):
                await self._register(redis)
                return [
                    WriteReceipt(
                        id=event.event_id, stream_id=answer[2:], duplicate=answer.startswith("d:")
                    )
                    for event, answer in zip(events, _texts(reply), strict=True)
                ]
            await self._refuse_or_pause(int(as_text(reply)[2:]), deadline)

    async def wait_aof(self, redis: Redis) -> None:
        """Block until the AOF holding the writes is fsynced (durable profile)."""
        try:
            with redis_errors("confirm the AOF fsync"):
                local, _ = await redis.execute_command(  # type: ignore[no-untyped-call]
                    "WAITAOF", 1, 0, self.settings.waitaof_timeout_ms
                )
        except RedisCommandError as e:
            raise ConfigError(
                f"profile 'durable' needs appendonly yes on the server: {e.reply}; "
                "run `hindsight-redis doctor`"
            ) from e
        if int(local) < 1:
            raise WriteTimeout(
                "write accepted but the AOF fsync was not confirmed within "
                f"{self.settings.waitaof_timeout_ms} ms"
            )

    async def wait_outcome(
        self, redis: Redis, receipt: WriteReceipt, timeout_s: float
    ) -> WriteReceipt:
        """Wait until the worker committed this write; its final receipt."""
        with redis_errors("wait for the write to be processed"):
            raw = await self._outcome(redis, receipt, time.monotonic() + timeout_s)
        if raw is None:
            raise WriteTimeout(
                f"write {receipt.id} was accepted but not processed within {timeout_s}s "
                "(are workers running? `hindsight-redis stats` shows the backlog)"
            )
        outcome = decode_outcome(raw)
        return WriteReceipt(
            id=receipt.id,
            status=str(outcome.get("status", "indexed")),
            stream_id=receipt.stream_id,
            reason=outcome.get("reason"),
            merged_into=outcome.get("merged_into"),
            duplicate=receipt.duplicate,
            conflicts_with=tuple(outcome.get("conflicts_with", ())),
        )

    async def _outcome(
        self, redis: Redis, receipt: WriteReceipt, deadline: float
    ) -> bytes | str | None:
        """The outcome of the write once it exists, or None past the deadline."""
        raw: bytes | str | None = await redis.get(self.keys.outcome(receipt.id))
        while raw is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if receipt.duplicate:  # the first write's waiter gets the notification
                await asyncio.sleep(min(_BLOCK_POLL_S, remaining))
                raw = await redis.get(self.keys.outcome(receipt.id))
                continue
            popped = await redis.blpop([self.keys.notify(receipt.id)], timeout=min(remaining, 1.0))
            raw = popped[1] if popped else await redis.get(self.keys.outcome(receipt.id))
        return raw


def _texts(reply: list[bytes | str]) -> list[str]:
    """The write script's replies as text (bytes from this client; str if decoding)."""
    return [r.decode() if isinstance(r, bytes) else r for r in reply]
