"""One namespace's share of a worker: its stream in the ``workers`` group, its pipeline.

A ``NamespaceConsumer`` reclaims entries whose consumer died or failed
(``XAUTOCLAIM`` after ``claim_idle_ms``), moves those delivered
``max_deliveries`` times to the dead-letter stream, and carries a batch
through its two ends: ``prepare`` (decode; rebuild the pipeline after a
reindex) and ``finish`` (its own stages, dedup against its index, the commit,
then the trim of what every group acknowledged: ``stream_keep_acked``). What
lies between is the worker's: reading new entries, and the stages that need
no namespace (filters, embed: ``common_stages``, with models shared by all
consumers, ``assembly.SharedParts``). One read and one run of those serve
many namespaces.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import Histogram
from redis.asyncio.client import Pipeline

from hindsight_redis.core.codec import decode_event
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import (
    HindsightError,
    IndexMoved,
    PoisonMessage,
    RedisCommandError,
    RedisUnavailable,
    redis_errors,
)
from hindsight_redis.pipeline.assembly import (
    BuiltPipeline,
    PipelineSettings,
    SharedParts,
    build_pipeline,
)
from hindsight_redis.pipeline.commit import Committer
from hindsight_redis.pipeline.maintenance import PeriodicSweep, trim_acknowledged
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.pipeline.stages.base import Candidate, Stage
from hindsight_redis.pipeline.streams import Entry
from hindsight_redis.redis import scripts

log = logging.getLogger(__name__)

FOLD_WHILE_BUSY_S = 60.0
"""How long access counts may wait to be folded while writes keep coming."""


BATCH_SECONDS = Histogram(
    "hindsight_worker_batch_seconds",
    "Time a worker spent on one batch (stages and commit).",
    ["namespace"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)


INDEX_LAG_SECONDS = Histogram(
    "hindsight_index_lag_seconds",
    "Seconds from a write (its created_at) to its outcome committed by a worker: "
    "searchable, merged, held or dropped.",
    ["namespace"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)


def observe_lag(namespace: str, candidates: Sequence[Candidate], now: float) -> None:
    """Record the index lag of each of ``candidates`` (a worker committed them at ``now``,
    ``time.time()``); a write without ``created_at`` is left out."""
    lag = INDEX_LAG_SECONDS.labels(namespace=namespace)
    for candidate in candidates:
        if candidate.event.created_at > 0:
            lag.observe(max(now - candidate.event.created_at, 0.0))


def observe_batch(namespace: str, seconds: float) -> None:
    """Record one worker batch of ``namespace`` that took ``seconds``."""
    BATCH_SECONDS.labels(namespace=namespace).observe(seconds)


@dataclass(slots=True)
class WorkerReport:
    """What one ``Worker.run()`` did (over every namespace it served)."""

    batches: int = 0
    indexed: int = 0
    merged: int = 0
    dropped: int = 0
    held: int = 0
    already: int = 0
    failed: int = 0
    dead_lettered: int = 0
    refined: int = 0
    """Memories given their contextual vector (a draft one, with ``contextual_drafts``)."""
    redone: int = 0
    """Draft contextual vectors replaced by the exact model's."""


class NamespaceConsumer:
    """Consumes the stream of ``keys.namespace`` as consumer ``name``; counts into ``report``.

    ``settings``: its pipeline's groups (``worker``: batches, reclaiming, retries,
    what the stream keeps); ``sweeps``: its periodic retention sweep.
    ``stages`` replaces the default stage list, ``extra_stages`` run after it.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        keys: Keys,
        settings: PipelineSettings,
        *,
        sweeps: PeriodicSweep,
        name: str,
        report: WorkerReport,
        shared: SharedParts,
        stages: Sequence[Stage] | None = None,
        extra_stages: Sequence[Stage] = (),
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.worker = settings.worker
        self.keys = keys
        self.name = name
        self.report = report
        self.sweeps = sweeps
        self.own_pending_first = False  # after an outage: re-read what this consumer held
        self.interrupted: set[str] = set()  # entries of batches an outage cut short
        self.may_refine = True  # False once the refiner found nothing, until the next commit
        self.last_reclaim = 0.0
        self.last_fold = time.monotonic()  # busy from the start: the first fold waits too
        self._shared = shared
        self._stages = list(stages) if stages is not None else None
        self._extra_stages = list(extra_stages)
        self._committer: Committer | None = None
        self._common: list[Stage] = []  # run over many namespaces' candidates at once
        self._own: list[Stage] = []
        self._built: BuiltPipeline | None = None
        self._refiner: Refiner | None = None
        self._redone = 0  # the refiner's count of drafts redone, as last reported

    @property
    def namespace(self) -> str:
        """The namespace served."""
        return self.keys.namespace

    async def start(self) -> None:
        """Create the consumer group if missing, ensure the index and build the stages."""
        await self.ensure_group()
        with redis_errors("start the worker"):
            await self.assemble()

    async def ensure_group(self) -> None:
        """Create the ``workers`` group (and the stream) unless it exists."""
        try:
            with redis_errors("create the consumer group"):
                await self.redis.xgroup_create(
                    self.keys.stream, self.keys.group, id="0", mkstream=True
                )
        except RedisCommandError as e:
            if "BUSYGROUP" not in e.reply:
                raise

    async def assemble(self) -> None:
        """(Re)build the stages and the committer for the index as it is now."""
        built = await build_pipeline(self.redis, self.keys, self.settings, self._shared)
        self._committer = Committer(
            self.redis,
            self.keys,
            vector_field=built.vector_field,
            vector_datatype=built.vector_datatype,
            generation=built.generation,
            outcome_ttl_s=self.worker.outcome_ttl_s,
            contextual=built.contextual,
            audit_retention_days=self.settings.trust.audit_retention_days,
        )
        if self._stages is None:
            self._common, own = self._shared.stages, built.own_stages
        else:  # the trust checks hold what must wait for a person, whatever the stages
            self._common, own = self._shared.guard, self._stages
        self._own = [*own, *self._extra_stages]
        self._built = built
        self._refiner = built.refiner
        self._redone = 0

    @property
    def common_stages(self) -> list[Stage]:
        """The leading stages that need no namespace: the worker runs them over the
        candidates of several namespaces at once, then each ``finish``-es its own."""
        return self._common

    @property
    def committer(self) -> Committer:
        """The committer of the current pipeline (``start()`` first)."""
        if self._committer is None:
            raise RuntimeError("NamespaceConsumer.start() was not called")
        return self._committer

    async def recover(self) -> None:
        """After an outage: the group and the index may be gone (a server without persistence)."""
        # First: should these calls fail and Redis be back by the next read, that read
        # must still re-read what this worker held when the outage hit.
        self.own_pending_first = True
        await self._uncount()  # first: Redis at maxmemory refuses to create groups
        await self.ensure_group()
        if self._built is not None and self._built.ensure_index is not None:
            await self._built.ensure_index()

    async def _uncount(self) -> None:
        """Take back the delivery of the entries an outage cut short (Redis unreachable, or
        at maxmemory refusing their commit): not their fault, it must not bring them nearer
        the dead letters, however long Redis refuses. An entry another consumer took
        meanwhile is left to it. (``XPENDING`` and ``XCLAIM`` are taken at maxmemory.)"""
        ids = sorted(self.interrupted)
        asked = self.redis.pipeline(transaction=False)
        for entry_id in ids:
            asked.xpending_range(
                self.keys.stream, self.keys.group, min=entry_id, max=entry_id, count=1
            )
        claims = self.redis.pipeline(transaction=False)
        for entry_id, info in zip(ids, await asked.execute() if ids else [], strict=True):
            if info and as_text(info[0]["consumer"]) == self.name:
                claims.xclaim(
                    self.keys.stream,
                    self.keys.group,
                    self.name,
                    min_idle_time=0,
                    message_ids=[entry_id],
                    retrycount=max(int(info[0]["times_delivered"]) - 1, 0),
                    justid=True,  # JUSTID: this claim is no delivery
                )
        await claims.execute()
        self.interrupted.clear()

    async def leave_group(self) -> None:
        """Stopped cleanly: forget this consumer, unless it holds entries (reclaimed later)."""
        with contextlib.suppress(RedisUnavailable), redis_errors("leave the consumer group"):
            await scripts.leave_group(
                self.redis, stream=self.keys.stream, group=self.keys.group, consumer=self.name
            )

    # -- a batch --------------------------------------------------------------

    def queue_reclaim(self, pipe: Pipeline) -> None:
        """Queue the ``XAUTOCLAIM`` of entries idle too long in any consumer's PEL
        (crashed workers or failures) on ``pipe``; its reply goes to ``reclaimed``.

        Only their ids (``JUSTID``): an entry's delivery count moves when a batch
        takes it to run (``claim``), so entries claimed together and never run,
        because one of them killed the worker first, are not counted as tried.
        """
        self.last_reclaim = time.monotonic()
        pipe.xautoclaim(
            self.keys.stream,
            self.keys.group,
            self.name,
            min_idle_time=self.worker.claim_idle_ms,
            start_id="0-0",
            count=self.worker.worker_batch_size,
            justid=True,
        )

    async def reclaimed(self, reply: Any) -> list[tuple[str, int]]:
        """The ids an ``XAUTOCLAIM JUSTID`` reply claimed, each with the delivery it is up
        for, less those dead-lettered now (delivered ``max_deliveries`` times already)."""
        entry_ids = [as_text(i) for i in reply or ()]
        if not entry_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for entry_id in entry_ids:
            pipe.xpending_range(
                self.keys.stream, self.keys.group, min=entry_id, max=entry_id, count=1
            )
        pipe.hmget(self.keys.errors, entry_ids)
        *pending, errors = await pipe.execute()
        keep: list[tuple[str, int]] = []
        spent: list[tuple[str, int, str]] = []
        for entry_id, info, error in zip(entry_ids, pending, errors, strict=True):
            delivered = int(info[0]["times_delivered"]) if info else 0
            if delivered < self.worker.max_deliveries:
                keep.append((entry_id, delivered + 1))
            else:
                reason = as_text(error) if error else "worker died while processing it"
                spent.append((entry_id, delivered, f"{reason} (after {delivered} deliveries)"))
        if spent:
            pipe = self.redis.pipeline(transaction=False)
            for entry_id, _, _ in spent:
                pipe.xrange(self.keys.stream, min=entry_id, max=entry_id, count=1)
            found = await pipe.execute()
            for (entry_id, delivered, reason), rows in zip(spent, found, strict=True):
                fields = rows[0][1] if rows else {}
                await self._dead_letter(entry_id, fields, reason, delivered)
        return keep

    async def claim(self, entry_ids: Sequence[str]) -> list[Entry]:
        """Reclaimed entries (``reclaimed``), taken to run now: ``XCLAIM`` counts the
        delivery and returns their fields (an entry deleted meanwhile is left out)."""
        claimed: Any = await self.redis.xclaim(
            self.keys.stream,
            self.keys.group,
            self.name,
            min_idle_time=0,
            message_ids=list(entry_ids),
        )
        return [(as_text(i), f) for i, f in claimed if f is not None]

    async def prepare(self, entries: list[Entry], generation: object) -> list[Candidate] | None:
        """The batch's candidates (poison entries are dead-lettered), or None when a reindex
        moved the index to ``generation`` (the live one, as read from ``Keys.index_meta``):
        the pipeline is then rebuilt and the entries stay pending until reclaimed.

        Raises ``EmbeddingMismatch`` when this worker's embedder no longer fits the index.
        """
        built = self.committer.generation
        if generation is not None and int(as_text(generation)) != built:
            moved = f"the index moved from generation {built} to {as_text(generation)}"
            log.warning("%s (reindex); reloading the pipeline of %s", moved, self.namespace)
            await self.assemble()
            self.report.batches += 1
            return None
        candidates: list[Candidate] = []
        for entry_id, fields in entries:
            try:
                event = decode_event(fields)
            except PoisonMessage as e:
                await self._dead_letter(entry_id, fields, f"PoisonMessage: {e}", 1)
                continue
            candidates.append(Candidate(entry_id=entry_id, event=event, content=event.content))
        return candidates

    async def finish(
        self, candidates: list[Candidate], entries: list[Entry], *, common_ran: bool, started: float
    ) -> None:
        """Run the namespace's own stages over ``candidates``, commit them, and trim what
        every group acknowledged (so acknowledged entries do not wait for the upkeep).

        ``common_ran``: the common stages (``common_stages``) processed them;
        False when those failed, and every candidate then runs the whole
        pipeline alone. ``started``: when the batch began (``perf_counter``).
        """
        try:
            ready = await self._run_own(candidates) if common_ran else None
            if ready is None:
                ready = await self._isolate(candidates, dict(entries))
            counts = await self.committer.commit(ready)
            observe_lag(self.namespace, ready, time.time())
        except IndexMoved as e:
            # Re-ensure: raises EmbeddingMismatch when the embedder does not fit any more.
            log.warning("%s; reloading the pipeline of %s", e, self.namespace)
            await self.assemble()
        else:
            self.report.indexed += counts["indexed"]
            self.report.merged += counts["merged"]
            self.report.dropped += counts["dropped"]
            self.report.held += counts["held"]
            self.report.already += counts["already"]
            await self._trim()
        self.report.batches += 1
        self.may_refine = True
        observe_batch(self.namespace, time.perf_counter() - started)

    async def _trim(self) -> None:
        """Trim the acknowledged entries (``stream_keep_acked``); a failure waits for the
        upkeep's turn (``maintain``), it never fails the batch."""
        try:
            await trim_acknowledged(self.redis, self.keys, self.worker.stream_keep_acked)
        except RedisUnavailable:
            raise
        except HindsightError as e:
            log.warning("could not trim the stream of %s: %s", self.namespace, e)

    async def _run_own(self, candidates: list[Candidate]) -> list[Candidate] | None:
        """``candidates`` after the own stages; None when the batch failed."""
        try:
            await run_stages(self._own, candidates)
        except RedisUnavailable:
            raise  # an outage is not the entries' fault: the loop waits it out
        except Exception:
            log.exception("batch of %d failed; retrying entries one by one", len(candidates))
            return None
        return candidates

    async def _dead_letter(
        self, entry_id: str, fields: dict[bytes, bytes], error: str, deliveries: int
    ) -> None:
        try:
            event = decode_event(fields)
            event_id, notify = event.event_id, event.notify
        except PoisonMessage:
            event_id, notify = None, False
        if await self.committer.dead_letter(
            entry_id, fields, error, deliveries, event_id=event_id, notify=notify
        ):
            self.report.dead_lettered += 1
            log.warning("dead-lettered stream entry %s: %s", entry_id, error)

    async def _isolate(
        self, candidates: list[Candidate], fields_by_id: dict[str, dict[bytes, bytes]]
    ) -> list[Candidate]:
        """Run each candidate alone so one poison entry cannot fail its batch-mates."""
        ready = []
        for old in candidates:
            candidate = Candidate(entry_id=old.entry_id, event=old.event, content=old.event.content)
            try:
                await run_stages([*self._common, *self._own], [candidate])
            except Exception as e:
                self.report.failed += 1
                error = f"{type(e).__name__}: {e}"
                if isinstance(e, HindsightError) and not e.retryable:
                    await self._dead_letter(old.entry_id, fields_by_id[old.entry_id], error, 1)
                else:  # stays pending; reclaimed after claim_idle_ms and retried
                    await self.redis.hset(self.keys.errors, old.entry_id, error[:2000])
                continue
            ready.append(candidate)
        return ready

    # -- when idle ------------------------------------------------------------

    async def refine(self, most: int | None = None, *, between_rounds: bool = False) -> int:
        """One refine step of at most ``most`` memories (default: the refine batch); 0 when
        nothing is pending (``between_rounds``: see ``Refiner.refine_once``).

        A refiner that fails for any reason but Redis being down is switched
        off for this run (logged): it must never hold up the stream.
        """
        if self._refiner is None:
            self.may_refine = False
            return 0
        try:
            done = await self._refiner.refine_once(most, between_rounds=between_rounds)
        except RedisUnavailable:
            raise
        except Exception:
            log.exception("contextual refiner of %s failed; continuing without it", self.namespace)
            self._refiner = None
            return 0
        self.may_refine = done > 0 or between_rounds  # drafts may wait for a later step
        redone = self._refiner.redone if self._refiner is not None else 0
        self.report.refined += done - (redone - self._redone)
        self.report.redone += redone - self._redone
        self._redone = redone
        return done

    async def maintain(self, *, busy: bool = False) -> None:
        """Trim what every group acknowledged; fold the access log (never raises).

        ``busy`` (writes keep coming): the fold waits until the worker is idle,
        or at most ``FOLD_WHILE_BUSY_S`` since the last one. A fold rewrites
        every memory searched or merged into since, and RediSearch re-indexes
        a hash on any write (both vectors): a third to half a second of Redis
        time per 1,000 memories, taken from ingest (docs/decisions.md,
        "The access fold waits while writes keep coming"). Nothing waits on it: ``get()`` and sweeps
        read the pending logs too.
        """
        try:
            await trim_acknowledged(self.redis, self.keys, self.worker.stream_keep_acked)
            now = time.monotonic()
            if busy and now - self.last_fold < FOLD_WHILE_BUSY_S:
                return
            self.last_fold = now
            if self._built is not None and self._built.maintenance is not None:
                await self._built.maintenance()
        except Exception:  # maintenance must never stop consumption
            log.exception("maintenance of %s failed", self.namespace)


async def run_stages(stages: Sequence[Stage], batch: list[Candidate]) -> None:
    """Pass a batch through every stage in order."""
    for stage in stages:
        if any(c.alive for c in batch):
            await stage.process(batch)
