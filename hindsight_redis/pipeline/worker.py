"""The worker: a consumer in the ``workers`` group of one namespace, a list, or every one.

Each round it reclaims entries whose consumer died or failed (those run
apart, in small batches, then alone: ``reading.reclaimed_chunks``), or reads
new entries of every served stream (one ``XREADGROUP`` per chunk of streams,
at most a batch per namespace), and hands each namespace its batch in turn
(``consumer.NamespaceConsumer``: stages, commit, dead letters). A flooded
namespace therefore gets one batch per round like any other and cannot
starve the rest. The models are loaded once and shared by all namespaces.

With ``namespaces="*"`` the worker serves every namespace of the prefix's
registry (``pipeline.namespaces``), re-read every ``namespace_refresh_s``, so
new namespaces are served without a restart. Signal handlers are only
installed when asked (the CLI does), never when embedded in someone's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import os
import signal
import socket
import time
import uuid
from collections.abc import Awaitable, Sequence
from typing import Literal, NamedTuple, TypeVar

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import (
    EmbeddingMismatch,
    HindsightError,
    InvalidArgument,
    RedisUnavailable,
    redis_errors,
)
from hindsight_redis.index.gc import ensure_search_gc
from hindsight_redis.pipeline.assembly import PipelineSettings, SharedParts, shared_parts
from hindsight_redis.pipeline.consumer import (
    NamespaceConsumer,
    WorkerReport,
    run_stages,
)
from hindsight_redis.pipeline.maintenance import PeriodicSweep
from hindsight_redis.pipeline.namespaces import ServedNamespaces, wanted
from hindsight_redis.pipeline.pacing import ROLES, Role
from hindsight_redis.pipeline.reading import RoundReader, reclaimed_chunks
from hindsight_redis.pipeline.refining import Refining
from hindsight_redis.pipeline.stages.base import Candidate, Stage
from hindsight_redis.pipeline.streams import Entry, Lease, all_drained
from hindsight_redis.providers.priority import one_blas_thread
from hindsight_redis.redis.connection import connect, require_search
from hindsight_redis.settings import Settings

__all__ = ["Worker", "WorkerReport", "run_stages"]

log = logging.getLogger(__name__)
_T = TypeVar("_T")
_MAINTENANCE_EVERY_S = 5.0  # alone; serving several namespaces, some of them every second:
_MAINTAIN_EACH_S = 60.0  # each at least this often
_MAX_OUTAGE_PAUSE_S = 5.0
# Serving many namespaces, namespaces' batches run the common stages together up to this
# many entries (docs/decisions.md, "Batches of 256"; reading.py reads ahead).
_JOINT_ENTRIES = 256
_CONCURRENT_COMMITS = 8  # namespaces running their own stages and commit at once


class _Round(NamedTuple):
    """What an ingest round found: entries (``busy``), and a full batch or reclaimed
    entries, so that more may wait (``behind``)."""

    busy: bool
    behind: bool


class Worker:
    """Consumes writes and indexes what survives the filters.

    ``namespaces``: None serves ``settings.namespace``; a list serves those;
    ``"*"`` serves every namespace of the prefix, new ones included.
    ``stages`` replaces the default stage list (filters, embed, dedup), after
    the trust checks, which always run; ``extra_stages`` run after it. Start
    several workers (processes or hosts) to scale out: they share each
    namespace's consumer group. ``role`` (default ``settings.worker_role``):
    ``"all"`` ingests and refines (``pipeline.pacing``), ``"ingest"`` never
    refines, ``"refine"`` only adds contextual vectors and reads no stream.
    In an application's process it leaves numpy's BLAS threads as they are;
    call ``providers.priority.one_blas_thread()`` first (or set
    ``OPENBLAS_NUM_THREADS=1``) unless the application needs them: a second
    BLAS thread spins a core away after the worker's small products. The CLI's
    workers (``run(own_process=True)``) run one.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        namespaces: Sequence[str] | Literal["*"] | None = None,
        name: str | None = None,
        stages: Sequence[Stage] | None = None,
        extra_stages: Sequence[Stage] = (),
        redis: aioredis.Redis | None = None,
        role: Role | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.role: Role = role or self.settings.worker_role
        if self.role not in ROLES:
            raise InvalidArgument(f"worker role must be one of {', '.join(ROLES)}, not {role!r}")
        self.keys = Keys(self.settings.key_prefix, self.settings.namespace)
        self._pipeline = PipelineSettings(
            worker=self.settings.worker,
            dedup=self.settings.dedup,
            index=self.settings.index,
            search=self.settings.search,
            embedding=self.settings.embedding,
            trust=self.settings.trust,
        )
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._multi = namespaces is not None
        self._maintenance_every_s = 1.0 if self._multi else _MAINTENANCE_EVERY_S
        self._served = ServedNamespaces(
            self.keys.prefix,
            self.settings.worker,
            wanted(namespaces, self.settings.namespace),
            self._consumer,
            strict=not self._multi,
        )
        self._stages = list(stages) if stages is not None else None
        self._extra_stages = list(extra_stages)
        self._redis = redis
        self._stopping = asyncio.Event()
        self._reader = RoundReader(
            self.name, self.settings, self._served, self._stopping, multi=self._multi
        )
        self._refining = Refining(
            self._served,
            share=self.settings.refine_share,
            multi=self._multi,
            stopping=self._stopping,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self.report = WorkerReport()
        self._shared: SharedParts | None = None
        self._turn = 0
        self._maintain_turn = 0

    @property
    def namespaces(self) -> list[str]:
        """The namespaces being served, sorted."""
        return sorted(self._served.consumers)

    def run(
        self,
        burst: bool = False,
        *,
        install_signal_handlers: bool = False,
        own_process: bool = False,
    ) -> WorkerReport:
        """Consume until stopped (``burst``: until every served stream is drained).

        ``own_process``: the worker is its process's only job (the CLI's). Once its models
        are loaded, everything then alive is moved out of the cyclic garbage collector's
        scans (``gc.freeze``): a full collection over the models, the regular expressions
        and the modules took ~100-300 ms of a loaded core, holding the loop and every write
        waiting on it (the index lag's tail), and younger ones up to ~50 ms; frozen, ~5 ms.
        Not in someone else's process: what it freezes that later becomes garbage in a
        cycle would never be freed. Its numpy runs one BLAS thread too
        (``providers.priority.one_blas_thread``: a second one spun a core away).
        """
        return asyncio.run(
            self.run_async(
                burst, install_signal_handlers=install_signal_handlers, own_process=own_process
            )
        )

    def stop(self) -> None:
        """Ask the worker to finish its round and return (safe from any thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stopping.set)

    async def run_async(
        self,
        burst: bool = False,
        *,
        install_signal_handlers: bool = False,
        own_process: bool = False,
    ) -> WorkerReport:
        """The asyncio form of ``run``."""
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self._reader = RoundReader(
            self.name, self.settings, self._served, self._stopping, multi=self._multi
        )
        self._refining = Refining(
            self._served,
            share=self.settings.refine_share,
            multi=self._multi,
            stopping=self._stopping,
        )
        if install_signal_handlers:
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(sig, self._stopping.set)
        owns = self._redis is None
        settings = self.settings
        redis = self._redis or await connect(settings.connection, settings.server, settings.worker)
        try:
            await require_search(redis, "start the worker")
            await ensure_search_gc(redis, settings.index, settings.connection)
            self._shared = shared_parts(
                settings.embedding, settings.filters, settings.llm, settings.trust
            )
            if own_process:
                one_blas_thread()
            if self.role != "refine":
                await asyncio.to_thread(self._shared.warm)
            if own_process:
                gc.collect()
                gc.freeze()
            await self._served.start(redis, self._stopping)
            await self._loop_until_done(redis, burst)
            for consumer in self._served.consumers.values():
                await consumer.leave_group()
        finally:
            for consumer in self._served.consumers.values():
                await consumer.sweeps.stop()
            if install_signal_handlers:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.remove_signal_handler(sig)
            if owns:
                await redis.aclose()
        return self.report

    def _consumer(self, redis: aioredis.Redis, namespace: str) -> NamespaceConsumer:
        assert self._shared is not None
        keys = Keys(self.keys.prefix, namespace)
        return NamespaceConsumer(
            redis,
            keys,
            self._pipeline,
            sweeps=PeriodicSweep(
                redis,
                keys,
                self.settings.sweeps,
                self.settings.retention,
                self.settings.trust,
                by=f"worker:{self.name}",
            ),
            name=self.name,
            report=self.report,
            shared=self._shared,
            stages=self._stages,
            extra_stages=self._extra_stages,
        )

    # -- the loop -------------------------------------------------------------

    async def _loop_until_done(self, redis: aioredis.Redis, burst: bool) -> None:
        block_ms = (
            min(self.settings.worker_block_ms, 100) if burst else self.settings.worker_block_ms
        )
        background = None
        if self.role == "all" and not burst:
            background = asyncio.create_task(self._refining.beside(block_ms))
        try:
            await self._consume(redis, burst, block_ms, refines_beside=background is not None)
        finally:
            await self._refining.cancel()  # a busy round's steps (nothing is lost)
            if background is not None:
                background.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await background
        if self.role == "refine":
            return
        with contextlib.suppress(RedisUnavailable), redis_errors("run maintenance"):
            for consumer in self._served.consumers.values():
                await consumer.maintain()

    async def _consume(
        self, redis: aioredis.Redis, burst: bool, block_ms: int, *, refines_beside: bool
    ) -> None:
        """Rounds until stopped (``burst``: until drained). ``refines_beside``: a background
        task refines whenever the cores are free; else refining happens between rounds."""
        last_maintenance = 0.0
        outage_s = 0.0
        refining = False
        while not self._stopping.is_set():
            try:
                with redis_errors("consume the stream"):
                    if self._served.refresh_due:
                        await self._served.refresh(redis)
                    if self.role == "refine":
                        if not await self._refining.alone(block_ms) and burst:
                            break
                        outage_s = 0.0
                        continue
                    # While refining, only peek at the streams between refine steps.
                    done = await self._round(redis, None if refining else block_ms)
                    refining = self.role != "ingest" and await self._refining.after_round(
                        busy=done.busy, behind=done.behind, beside=refines_beside
                    )
                    if not done.busy and not refining and burst and await self._drained(redis):
                        break
                    if time.monotonic() - last_maintenance > self._maintenance_every_s:
                        last_maintenance = time.monotonic()
                        await self._maintain_some(busy=done.busy)
                    self._start_a_sweep()  # runs beside consumption
                    outage_s = 0.0
            except RedisUnavailable as e:
                # Redis restarting or unreachable: nothing is lost (unacknowledged
                # entries stay pending), so wait and resume where the streams are.
                outage_s = min(max(outage_s * 2, 0.1), _MAX_OUTAGE_PAUSE_S)
                log.warning("redis unavailable (%s); retrying in %.1fs", e, outage_s)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), outage_s)
                with contextlib.suppress(RedisUnavailable), redis_errors("reconnect"):
                    for consumer in self._served.consumers.values():
                        await consumer.recover()

    async def _round(self, redis: aioredis.Redis, block_ms: int | None) -> _Round:
        """Process the entries reclaimed this round (apart, in small batches), else read
        and process at most a batch per namespace."""
        consumers = self._served.rotation(self._turn)
        self._turn += 1
        if not consumers:
            with contextlib.suppress(TimeoutError):  # nothing to serve yet
                await asyncio.wait_for(self._stopping.wait(), (block_ms or 0) / 1000)
            return _Round(busy=False, behind=False)
        async with Lease(redis, self.name, self.settings.claim_idle_ms) as lease:
            reclaimed = await self._reader.reclaim(redis, consumers, lease)
            if reclaimed:  # apart from new entries, in small batches (reclaimed_chunks)
                for consumer in consumers:
                    for chunk in reclaimed_chunks(
                        reclaimed.get(consumer.namespace, []),
                        batch_size=self.settings.worker_batch_size,
                        max_deliveries=self.settings.max_deliveries,
                    ):
                        entries = await consumer.claim(chunk)
                        if entries:
                            await self._process(redis, [(consumer, entries)])
                return _Round(busy=True, behind=True)
            batches, full = await self._reader.read_new(redis, consumers, lease, block_ms)
            batch = self.settings.worker_batch_size
            work: list[tuple[NamespaceConsumer, list[Entry]]] = []
            size = 0
            for consumer in consumers:
                entries = batches.get(consumer.namespace, [])
                if consumer.namespace in full and len(entries) < batch:
                    entries += await self._reader.top_up(
                        redis, consumer, batch - len(entries), lease
                    )
                if entries:
                    work.append((consumer, entries))
                    size += len(entries)
                if size >= _JOINT_ENTRIES:
                    await self._process(redis, work)
                    work, size = [], 0
            if work:
                await self._process(redis, work)
        return _Round(busy=bool(batches), behind=bool(full))

    async def _process(
        self, redis: aioredis.Redis, work: list[tuple[NamespaceConsumer, list[Entry]]]
    ) -> None:
        """The batches of several namespaces (``_process_all``); cut short by an outage,
        their deliveries are taken back once Redis answers (``NamespaceConsumer.recover``)."""
        try:
            await self._process_all(redis, work)
        except RedisUnavailable:
            for consumer, entries in work:
                consumer.interrupted.update(entry_id for entry_id, _ in entries)
            raise

    async def _process_all(
        self, redis: aioredis.Redis, work: list[tuple[NamespaceConsumer, list[Entry]]]
    ) -> None:
        """The batches of several namespaces: the common stages (filters, embed) run once
        over all their candidates, then each namespace runs its own and commits."""
        started = time.perf_counter()
        pipe = redis.pipeline(transaction=False)
        for consumer, _ in work:
            pipe.hget(consumer.keys.index_meta, "generation")
        prepared = []
        for (consumer, entries), generation in zip(work, await pipe.execute(), strict=True):
            candidates = await self._guard(consumer, consumer.prepare(entries, generation))
            if candidates is not None:
                prepared.append((consumer, candidates, entries))
        if not prepared:
            return
        common_ran = True
        try:
            await run_stages(prepared[0][0].common_stages, [c for _, cs, _ in prepared for c in cs])
        except RedisUnavailable:
            raise  # an outage is not the entries' fault: the loop waits it out
        except Exception:
            log.exception("batch of %d namespaces failed; retrying one by one", len(prepared))
            common_ran = False
        slots = asyncio.Semaphore(_CONCURRENT_COMMITS)

        async def finish(job: tuple[NamespaceConsumer, list[Candidate], list[Entry]]) -> None:
            consumer, candidates, entries = job
            async with slots:  # their Redis round trips overlap
                done = consumer.finish(candidates, entries, common_ran=common_ran, started=started)
                await self._guard(consumer, done)

        outcomes = await asyncio.gather(*map(finish, prepared), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _guard(self, consumer: NamespaceConsumer, step: Awaitable[_T]) -> _T | None:
        """Await one namespace's step. Serving many, its failure stops only that namespace."""
        try:
            return await step
        except RedisUnavailable:
            raise
        except EmbeddingMismatch as e:
            if not self._multi:
                raise
            self._served.drop(consumer, e)
        except HindsightError:
            if not self._multi:
                raise
            log.exception("batch of %s failed; its entries stay pending", consumer.namespace)
        return None

    # -- between rounds -------------------------------------------------------

    async def _drained(self, redis: aioredis.Redis) -> bool:
        """True when every entry of every served stream was delivered and acknowledged."""
        return await all_drained(redis, list(self._served.by_stream))

    async def _maintain_some(self, *, busy: bool) -> None:
        """Maintain the next namespaces in turn: each at least every ``_MAINTAIN_EACH_S``
        (``busy``: the last round had writes to process)."""
        consumers = self._served.rotation(self._maintain_turn)
        share = math.ceil(len(consumers) * self._maintenance_every_s / _MAINTAIN_EACH_S)
        for consumer in consumers[:share]:
            await consumer.maintain(busy=busy)
        self._maintain_turn += share

    def _start_a_sweep(self) -> None:
        """Start the next due retention sweep, one at a time per worker."""
        consumers = list(self._served.consumers.values())
        if any(c.sweeps.running for c in consumers):
            return
        for consumer in consumers:
            if consumer.sweeps.start_if_due():
                return
