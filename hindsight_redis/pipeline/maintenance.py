"""A worker's upkeep between batches: trim what every group acknowledged; periodic sweeps."""

from __future__ import annotations

import asyncio
import logging
import time

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import SweepBusy
from hindsight_redis.lifecycle.forgetting import sweep
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.settings import RetentionSettings, SweepSettings

log = logging.getLogger(__name__)


def _id_tuple(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


async def trim_acknowledged(redis: aioredis.Redis, keys: Keys, keep_below: int) -> int:
    """Trim stream entries every group has acknowledged, once the stream passes ``keep_below``.

    Never trims an entry that is undelivered or pending in any group.
    """
    if await redis.xlen(keys.stream) <= keep_below:
        return 0
    boundary: tuple[int, int] | None = None
    for group in await redis.xinfo_groups(keys.stream):
        name = as_text(group["name"])
        limit = _id_tuple(as_text(group["last-delivered-id"]))
        if int(group["pending"]):
            summary = await redis.xpending(keys.stream, name)
            if summary["min"] is not None:  # None: all acknowledged since
                limit = min(limit, _id_tuple(as_text(summary["min"])))
        boundary = limit if boundary is None else min(boundary, limit)
    if boundary is None:
        return 0
    trimmed: int = await redis.xtrim(
        keys.stream, minid=f"{boundary[0]}-{boundary[1]}", approximate=False
    )
    return trimmed


class PeriodicSweep:
    """A worker's retention sweep every ``sweep_interval_s``, in the background.

    ``sweeps`` says how often and how far; ``retention`` scores the memories.

    Runs beside consumption (a sweep of many memories takes a while), one at a
    time per worker; across workers the lease lets only one sweep a namespace,
    so the others skip their turn. ``stop()`` asks a running sweep to end after
    its current step (a rerun finishes the rest).
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        keys: Keys,
        sweeps: SweepSettings,
        retention: RetentionSettings,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._sweeps = sweeps
        self._retention = retention
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._last = time.monotonic()  # the first sweep comes one interval after start
        self.runs = 0

    @property
    def enabled(self) -> bool:
        """True when ``sweep_interval_s`` is set."""
        return self._sweeps.sweep_interval_s > 0

    @property
    def running(self) -> bool:
        """True while a sweep of this namespace runs."""
        return self._task is not None and not self._task.done()

    def start_if_due(self) -> bool:
        """Start a sweep when the interval has passed and none is running; True if started."""
        if not self.enabled or self._stopping or self.running:
            return False
        if time.monotonic() - self._last < self._sweeps.sweep_interval_s:
            return False
        self._last = time.monotonic()
        self._task = asyncio.create_task(self._run())
        return True

    async def _run(self) -> None:
        sweeps = self._sweeps
        try:
            report = await sweep(
                self._redis,
                self._keys,
                RetentionPolicy.from_settings(self._retention),
                threshold=sweeps.sweep_threshold,
                max_active=sweeps.sweep_max_active,
                batch=sweeps.sweep_batch,
                lease_s=sweeps.sweep_lease_s,
                show=1,
                redis_share=sweeps.sweep_redis_share,
                should_stop=lambda: self._stopping,
            )
        except SweepBusy:
            log.debug("another worker is sweeping %s", self._keys.namespace)
            return
        except Exception:  # a failed sweep must never stop the worker
            log.exception("retention sweep failed")
            return
        self.runs += 1
        if report.archived or report.kept_changed:
            log.info(
                "sweep of %s: archived %d of %d active (%d changed meanwhile) in %.1fs",
                self._keys.namespace,
                report.archived,
                report.active_before,
                report.kept_changed,
                report.elapsed_s,
            )

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Ask a running sweep to stop after its step, and wait for it."""
        self._stopping = True
        if self._task is not None and not self._task.done():
            _done, pending = await asyncio.wait({self._task}, timeout=timeout_s)
            for task in pending:
                task.cancel()
