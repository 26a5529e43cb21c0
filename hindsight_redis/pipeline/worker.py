"""The worker: a consumer of the namespace's stream in the ``workers`` group.

Each round it reclaims entries whose consumer died or failed (``XAUTOCLAIM``
after ``claim_idle_ms``), moves those delivered ``max_deliveries`` times to
the dead-letter stream, fills the rest of the batch with new entries
(``XREADGROUP >``), runs the stages and commits. Failed entries stay pending
and are retried by whichever worker reclaims them. Signal handlers are only
installed when asked (the CLI does), never when embedded in someone's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis import scripts
from hindsight_redis.codec import decode_event
from hindsight_redis.connection import connect, require_search
from hindsight_redis.errors import (
    HindsightError,
    IndexMoved,
    PoisonMessage,
    RedisCommandError,
    RedisUnavailable,
    redis_errors,
)
from hindsight_redis.keys import Keys
from hindsight_redis.pipeline.base import Candidate, Stage
from hindsight_redis.pipeline.commit import Committer
from hindsight_redis.pipeline.maintenance import PeriodicSweep, trim_acknowledged
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.resp import as_text
from hindsight_redis.settings import Settings

log = logging.getLogger(__name__)
Entry = tuple[str, dict[bytes, bytes]]
_MAINTENANCE_EVERY_S = 5.0
_MAX_OUTAGE_PAUSE_S = 5.0


@dataclass(slots=True)
class WorkerReport:
    """What one ``run()`` did."""

    batches: int = 0
    indexed: int = 0
    merged: int = 0
    dropped: int = 0
    already: int = 0
    failed: int = 0
    dead_lettered: int = 0
    refined: int = 0


class Worker:
    """Consumes writes of one namespace and indexes what survives the filters.

    ``stages`` replaces the default stage list (filters, embed, dedup);
    ``extra_stages`` run after it. Start several workers (processes or hosts)
    to scale out: they share the consumer group.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        name: str | None = None,
        stages: Sequence[Stage] | None = None,
        extra_stages: Sequence[Stage] = (),
        redis: aioredis.Redis | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.keys = Keys(self.settings.key_prefix, self.settings.namespace)
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._stages = list(stages) if stages is not None else None
        self._extra_stages = list(extra_stages)
        self._redis = redis
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.report = WorkerReport()
        self._maintenance: Callable[[], Awaitable[object]] | None = None
        self._ensure_index: Callable[[], Awaitable[object]] | None = None
        self._refiner: Refiner | None = None
        self._own_pending_first = False
        self._sweeps: PeriodicSweep | None = None

    def run(self, burst: bool = False, *, install_signal_handlers: bool = False) -> WorkerReport:
        """Consume until stopped (``burst``: until the stream is drained)."""
        return asyncio.run(self.run_async(burst, install_signal_handlers=install_signal_handlers))

    def stop(self) -> None:
        """Ask the worker to finish its batch and return (safe from any thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stopping.set)

    async def run_async(
        self, burst: bool = False, *, install_signal_handlers: bool = False
    ) -> WorkerReport:
        """The asyncio form of ``run``."""
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        if install_signal_handlers:
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(sig, self._stopping.set)
        owns = self._redis is None
        redis = self._redis or await connect(self.settings)
        self._sweeps = PeriodicSweep(redis, self.keys, self.settings)
        try:
            await require_search(redis, "start the worker")
            await self._ensure_group(redis)
            with redis_errors("start the worker"):
                committer, stages = await self._assemble(redis)
            await self._loop_until_done(redis, committer, stages, burst)
            await self._leave_group(redis)
        finally:
            await self._sweeps.stop()
            if install_signal_handlers:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.remove_signal_handler(sig)
            if owns:
                await redis.aclose()
        return self.report

    async def _leave_group(self, redis: aioredis.Redis) -> None:
        """Stopped cleanly: forget this consumer, unless it holds entries (reclaimed later)."""
        with contextlib.suppress(RedisUnavailable), redis_errors("leave the consumer group"):
            await scripts.leave_group(
                redis, stream=self.keys.stream, group=self.keys.group, consumer=self.name
            )

    async def _assemble(self, redis: aioredis.Redis) -> tuple[Committer, list[Stage]]:
        from hindsight_redis.pipeline.assembly import build_pipeline

        built = await build_pipeline(redis, self.keys, self.settings)
        committer = Committer(
            redis,
            self.keys,
            vector_field=built.vector_field,
            embedding_model=built.embedding_model,
            generation=built.generation,
            outcome_ttl_s=self.settings.outcome_ttl_s,
            contextual=built.contextual,
        )
        stages = self._stages if self._stages is not None else built.stages
        stages = [*stages, *self._extra_stages]
        self._maintenance = built.maintenance
        self._ensure_index = built.ensure_index
        self._refiner = built.refiner
        return committer, stages

    async def _ensure_group(self, redis: aioredis.Redis) -> None:
        try:
            with redis_errors("create the consumer group"):
                await redis.xgroup_create(self.keys.stream, self.keys.group, id="0", mkstream=True)
        except RedisCommandError as e:
            if "BUSYGROUP" not in e.reply:
                raise

    async def _loop_until_done(
        self, redis: aioredis.Redis, committer: Committer, stages: list[Stage], burst: bool
    ) -> None:
        last_maintenance = 0.0
        block_ms = (
            min(self.settings.worker_block_ms, 100) if burst else self.settings.worker_block_ms
        )
        outage_s = 0.0
        refining = False
        while not self._stopping.is_set():
            try:
                with redis_errors("consume the stream"):
                    entries = await self._reclaim(redis, committer)
                    room = self.settings.worker_batch_size - len(entries)
                    if room > 0:
                        # While refining, only peek at the stream between refine steps.
                        block = None if entries or refining else block_ms
                        entries += await self._read_new(redis, room, block=block)
                    if entries:
                        try:
                            await self._check_generation(redis, committer)
                            await self._process(entries, committer, stages)
                        except IndexMoved as e:
                            # Re-ensure: raises EmbeddingMismatch (and stops this worker)
                            # when its embedder is not the one the index was rebuilt with.
                            log.warning("%s; reloading the pipeline", e)
                            committer, stages = await self._assemble(redis)
                        self.report.batches += 1
                        refining = False
                    else:
                        refining = await self._refine() > 0
                        if not refining and burst and await self._drained(redis):
                            break
                    if time.monotonic() - last_maintenance > _MAINTENANCE_EVERY_S:
                        last_maintenance = time.monotonic()
                        await self._maintain(redis)
                    if self._sweeps is not None:
                        self._sweeps.start_if_due()  # runs beside consumption
                    outage_s = 0.0
            except RedisUnavailable as e:
                # Redis restarting or unreachable: nothing is lost (unacknowledged
                # entries stay pending), so wait and resume where the stream is.
                outage_s = min(max(outage_s * 2, 0.1), _MAX_OUTAGE_PAUSE_S)
                log.warning("redis unavailable (%s); retrying in %.1fs", e, outage_s)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), outage_s)
                with contextlib.suppress(RedisUnavailable), redis_errors("reconnect"):
                    await self._recover(redis)
        with contextlib.suppress(RedisUnavailable), redis_errors("run maintenance"):
            await self._maintain(redis)

    async def _recover(self, redis: aioredis.Redis) -> None:
        """After an outage: the group and the index may be gone (a server without persistence)."""
        await self._ensure_group(redis)
        if self._ensure_index is not None:
            await self._ensure_index()
        self._own_pending_first = True  # what this worker held when the outage hit

    async def _check_generation(self, redis: aioredis.Redis, committer: Committer) -> None:
        """``IndexMoved`` when a reindex swapped the index since the pipeline was built."""
        live = await redis.hget(self.keys.index_meta, "generation")
        if live is not None and int(live) != committer.generation:
            raise IndexMoved(
                f"the index moved from generation {committer.generation} to {int(live)} (reindex)"
            )

    async def _read_new(self, redis: aioredis.Redis, count: int, block: int | None) -> list[Entry]:
        # ">" reads new entries; "0" re-reads this consumer's own pending ones,
        # which after an outage need no wait for claim_idle_ms.
        start = "0" if self._own_pending_first else ">"
        self._own_pending_first = False
        response = await redis.xreadgroup(
            self.keys.group, self.name, {self.keys.stream: start}, count=count, block=block or None
        )
        streams: Any = response or []
        if isinstance(streams, dict):  # RESP3 replies map stream -> entries
            streams = list(streams.items())
        entries: list[Entry] = []
        for _stream, items in streams:
            # A pending entry deleted from the stream comes back without fields.
            entries += [(as_text(entry_id), fields) for entry_id, fields in items if fields]
        return entries

    async def _reclaim(self, redis: aioredis.Redis, committer: Committer) -> list[Entry]:
        """Entries idle too long in any consumer's PEL: crashed workers or failures."""
        _next, claimed, _deleted = await redis.xautoclaim(
            self.keys.stream,
            self.keys.group,
            self.name,
            min_idle_time=self.settings.claim_idle_ms,
            start_id="0-0",
            count=self.settings.worker_batch_size,
        )
        entries = [(as_text(i), f) for i, f in claimed if f is not None]
        if not entries:
            return []
        pipe = redis.pipeline(transaction=False)
        for entry_id, _ in entries:
            pipe.xpending_range(
                self.keys.stream, self.keys.group, min=entry_id, max=entry_id, count=1
            )
        pipe.hmget(self.keys.errors, [entry_id for entry_id, _ in entries])
        *pending, errors = await pipe.execute()
        keep: list[Entry] = []
        for (entry_id, fields), info, error in zip(entries, pending, errors, strict=True):
            deliveries = int(info[0]["times_delivered"]) if info else 1
            if deliveries <= self.settings.max_deliveries:
                keep.append((entry_id, fields))
                continue
            reason = as_text(error) if error else "worker died while processing it"
            await self._dead_letter(
                committer,
                entry_id,
                fields,
                f"{reason} (after {deliveries - 1} deliveries)",
                deliveries - 1,
            )
        return keep

    async def _dead_letter(
        self,
        committer: Committer,
        entry_id: str,
        fields: dict[bytes, bytes],
        error: str,
        deliveries: int,
    ) -> None:
        try:
            event = decode_event(fields)
            event_id, notify = event.event_id, event.notify
        except PoisonMessage:
            event_id, notify = None, False
        if await committer.dead_letter(
            entry_id, fields, error, deliveries, event_id=event_id, notify=notify
        ):
            self.report.dead_lettered += 1
            log.warning("dead-lettered stream entry %s: %s", entry_id, error)

    async def _process(
        self, entries: list[Entry], committer: Committer, stages: list[Stage]
    ) -> None:
        candidates: list[Candidate] = []
        for entry_id, fields in entries:
            try:
                event = decode_event(fields)
            except PoisonMessage as e:
                await self._dead_letter(committer, entry_id, fields, f"PoisonMessage: {e}", 1)
                continue
            candidates.append(Candidate(entry_id=entry_id, event=event, content=event.content))
        async with self._lease(committer.redis, [c.entry_id for c in candidates]):
            try:
                await run_stages(stages, candidates)
                ready = candidates
            except RedisUnavailable:
                raise  # an outage is not the entries' fault: the loop waits it out
            except Exception:
                log.exception("batch of %d failed; retrying entries one by one", len(candidates))
                ready = await self._isolate(candidates, committer, stages, dict(entries))
            counts = await committer.commit(ready)
        self.report.indexed += counts["indexed"]
        self.report.merged += counts["merged"]
        self.report.dropped += counts["dropped"]
        self.report.already += counts["already"]

    @contextlib.asynccontextmanager
    async def _lease(self, redis: aioredis.Redis, entry_ids: list[str]) -> AsyncIterator[None]:
        """Keep a batch claimed while it is processed (slow LLM calls, big batches).

        Every third of ``claim_idle_ms`` the worker re-claims its entries
        (``XCLAIM ... JUSTID``), resetting their idle time, so no other worker
        reclaims and redoes them. Entries already acknowledged are ignored.
        """
        interval_s = self.settings.claim_idle_ms / 3000
        ids: list[Any] = list(entry_ids)

        done = asyncio.Event()

        async def renew() -> None:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), interval_s)
                if done.is_set():
                    return
                with contextlib.suppress(RedisUnavailable), redis_errors("renew the lease"):
                    await redis.xclaim(
                        self.keys.stream,
                        self.keys.group,
                        self.name,
                        min_idle_time=int(interval_s * 500),
                        message_ids=ids,
                        justid=True,
                    )

        renewal = asyncio.create_task(renew()) if entry_ids else None
        try:
            yield
        finally:
            # Signal, don't cancel: a cancel landing inside the Redis client can
            # be swallowed there, and awaiting such a task would hang the worker.
            done.set()
            if renewal is not None:
                finished, _ = await asyncio.wait({renewal}, timeout=5.0)
                if not finished:
                    renewal.cancel()

    async def _isolate(
        self,
        candidates: list[Candidate],
        committer: Committer,
        stages: list[Stage],
        fields_by_id: dict[str, dict[bytes, bytes]],
    ) -> list[Candidate]:
        """Run each candidate alone so one poison entry cannot fail its batch-mates."""
        ready = []
        for old in candidates:
            candidate = Candidate(entry_id=old.entry_id, event=old.event, content=old.event.content)
            try:
                await run_stages(stages, [candidate])
            except Exception as e:
                self.report.failed += 1
                error = f"{type(e).__name__}: {e}"
                if isinstance(e, HindsightError) and not e.retryable:
                    await self._dead_letter(
                        committer, old.entry_id, fields_by_id[old.entry_id], error, 1
                    )
                else:  # stays pending; reclaimed after claim_idle_ms and retried
                    await committer.redis.hset(self.keys.errors, old.entry_id, error[:2000])
                continue
            ready.append(candidate)
        return ready

    async def _refine(self) -> int:
        """One background refine step while the stream is idle; 0 when nothing is pending.

        A refiner that fails for any reason but Redis being down is switched
        off for this run (logged): it must never hold up the stream.
        """
        if self._refiner is None:
            return 0
        try:
            done = await self._refiner.refine_once()
        except RedisUnavailable:
            raise
        except Exception:
            log.exception("contextual refiner failed; continuing without it")
            self._refiner = None
            return 0
        self.report.refined += done
        return done

    async def _drained(self, redis: aioredis.Redis) -> bool:
        """True when every entry was delivered and acknowledged."""
        for group in await redis.xinfo_groups(self.keys.stream):
            if as_text(group["name"]) == self.keys.group:
                return int(group["pending"]) == 0 and int(group.get("lag") or 0) == 0
        return True

    async def _maintain(self, redis: aioredis.Redis) -> None:
        try:
            await trim_acknowledged(redis, self.keys, self.settings.stream_keep_acked)
            if self._maintenance is not None:
                await self._maintenance()
        except Exception:  # maintenance must never stop consumption
            log.exception("maintenance failed")


async def run_stages(stages: Sequence[Stage], batch: list[Candidate]) -> None:
    """Pass a batch through every stage in order."""
    for stage in stages:
        if any(c.alive for c in batch):
            await stage.process(batch)
