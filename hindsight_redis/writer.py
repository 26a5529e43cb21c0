"""The write path: how accepted writes reach the stream.

A write without an idempotency key is one ``XADD`` behind a backlog gate
(re-checked at most every ``_GATE_TTL_S`` per client); a batch, or a write
with a key, is one Lua script call that checks idempotency and the backlog
and appends atomically. The durable profile then waits for the AOF fsync.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from hindsight_redis import scripts
from hindsight_redis.codec import EVENT_FIELD, decode_outcome, encode_event
from hindsight_redis.errors import (
    Backpressure,
    ConfigError,
    RedisUnavailable,
    WriteTimeout,
)
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent, WriteReceipt
from hindsight_redis.settings import Settings
from hindsight_redis.stats import backlog

_BLOCK_POLL_S = 0.05
_GATE_TTL_S = 0.05


class StreamWriter:
    """Appends validated events to a namespace's stream; holds no connection."""

    def __init__(self, settings: Settings, keys: Keys) -> None:
        self.settings = settings
        self.keys = keys
        self._write_sha: str | None = None
        self._room_until = 0.0  # monotonic time until which the backlog gate is open
        # Arguments every write script call starts with, encoded once.
        self._write_keys = (keys.stream.encode(), keys.stats.encode())
        self._write_args = (
            str(settings.max_backlog).encode(),
            str(settings.idempotency_ttl_s).encode(),
        )

    def _deadline(self) -> float:
        return time.monotonic() + self.settings.backpressure_timeout_s

    async def append_one(self, redis: aioredis.Redis, event: MemoryEvent) -> WriteReceipt:
        """A single write without idempotency key: a plain XADD behind the backlog gate.

        The gate trusts a "there is room" answer for ``_GATE_TTL_S``, so a
        client does not pay a second command per write; at the limit it asks
        every time. The limit can thus be overshot by what clients write in
        that window, never by more.
        """
        if time.monotonic() >= self._room_until:
            await self._wait_for_room(redis, self._deadline())
        try:
            stream_id = await redis.xadd(self.keys.stream, {EVENT_FIELD: encode_event(event)})
        except (RedisConnectionError, RedisTimeoutError) as e:
            raise RedisUnavailable(
                f"write failed; retry it (an idempotency_key makes retries exactly-once): {e}"
            ) from e
        sid = stream_id.decode() if isinstance(stream_id, bytes) else str(stream_id)
        return WriteReceipt(id=event.event_id, stream_id=sid)

    async def _wait_for_room(self, redis: aioredis.Redis, deadline: float) -> None:
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
        self,
        redis: aioredis.Redis,
        events: list[MemoryEvent],
        items: Sequence[Mapping[str, Any]],
    ) -> list[WriteReceipt]:
        """Append a batch with one script call: accepted whole, or not at all."""
        deadline = self._deadline()
        while True:
            reply = await self._run_write_script(redis, events, items)
            if not isinstance(reply, bytes | str):
                replies = [r.decode() if isinstance(r, bytes) else r for r in reply]
                return [
                    WriteReceipt(
                        id=event.event_id,
                        stream_id=answer[2:],
                        duplicate=answer.startswith("d:"),
                    )
                    for event, answer in zip(events, replies, strict=True)
                ]
            current = int((reply.decode() if isinstance(reply, bytes) else reply)[2:])
            await self._refuse_or_pause(current, deadline)

    async def _run_write_script(
        self,
        redis: aioredis.Redis,
        events: list[MemoryEvent],
        items: Sequence[Mapping[str, Any]],
    ) -> Any:
        """One EVALSHA for the whole batch: a single command, a single round trip."""
        keys: list[str | bytes] = list(self._write_keys)
        args: list[Any] = list(self._write_args)
        for event, item in zip(events, items, strict=True):
            keys.append(self.keys.idempotency(event.event_id))
            args += [encode_event(event), b"0" if item.get("idempotency_key") is None else b"1"]
        for attempt in (1, 2):
            if self._write_sha is None:
                self._write_sha = await redis.script_load(scripts.WRITE)
            try:
                return await redis.evalsha(self._write_sha, len(keys), *keys, *args)
            except NoScriptError:
                # The server lost its script cache (a restart): load it again. A
                # script refused with NOSCRIPT did not run, so nothing is written twice.
                self._write_sha = None
                if attempt == 2:
                    raise
            except (RedisConnectionError, RedisTimeoutError) as e:
                raise RedisUnavailable(
                    f"write failed; retry with the same idempotency_key to stay exactly-once: {e}"
                ) from e
        raise AssertionError("unreachable")

    async def wait_aof(self, redis: aioredis.Redis) -> None:
        """Block until the AOF holding the writes is fsynced (durable profile)."""
        try:
            local, _ = await redis.execute_command(  # type: ignore[no-untyped-call]
                "WAITAOF", 1, 0, self.settings.waitaof_timeout_ms
            )
        except ResponseError as e:
            raise ConfigError(
                f"profile 'durable' needs appendonly yes on the server: {e}; "
                "run `hindsight-redis doctor`"
            ) from e
        if int(local) < 1:
            raise WriteTimeout(
                "write accepted but the AOF fsync was not confirmed within "
                f"{self.settings.waitaof_timeout_ms} ms"
            )

    async def wait_outcome(
        self, redis: aioredis.Redis, receipt: WriteReceipt, timeout_s: float
    ) -> WriteReceipt:
        """Wait until the worker committed this write; its final receipt."""
        deadline = time.monotonic() + timeout_s
        raw = await redis.get(self.keys.outcome(receipt.id))
        while raw is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WriteTimeout(
                    f"write {receipt.id} was accepted but not processed within {timeout_s}s "
                    "(are workers running? `hindsight-redis stats` shows the backlog)"
                )
            if receipt.duplicate:
                await asyncio.sleep(min(_BLOCK_POLL_S, remaining))
                raw = await redis.get(self.keys.outcome(receipt.id))
                continue
            popped = await redis.blpop([self.keys.notify(receipt.id)], timeout=min(remaining, 1.0))
            raw = popped[1] if popped else await redis.get(self.keys.outcome(receipt.id))
        outcome = decode_outcome(raw)
        status = str(outcome.get("status", "indexed"))
        return WriteReceipt(
            id=receipt.id,
            status=status,
            stream_id=receipt.stream_id,
            reason=outcome.get("reason"),
            merged_into=outcome.get("merged_into"),
            duplicate=receipt.duplicate,
            conflicts_with=tuple(outcome.get("conflicts_with", ())),
        )
