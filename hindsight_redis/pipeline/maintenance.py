"""A worker's upkeep between batches: trim what every group acknowledged; periodic sweeps
(each recorded in the audit trail)."""

from __future__ import annotations

import asyncio
import logging
import time

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import SweepBusy, redis_errors
from hindsight_redis.lifecycle.forgetting import sweep
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.redis import scripts
from hindsight_redis.settings import RetentionSettings, SweepSettings, TrustSettings
from hindsight_redis.trust.audit import record_audit

log = logging.getLogger(__name__)


async def trim_acknowledged(redis: aioredis.Redis, keys: Keys, keep_below: int) -> int:
    """Trim stream entries every group has acknowledged, once the stream passes ``keep_below``
    (``stream_keep_acked``; 0: whenever there are some). One script call.

    Never trims an entry that is undelivered or pending in any group.
    """
    with redis_errors("trim the acknowledged entries"):
        trimmed = await scripts.trim_acked(redis, stream=keys.stream, keep_below=keep_below)
    return int(trimmed)


class PeriodicSweep:
    """A worker's retention sweep every ``sweep_interval_s``, in the background.

    ``sweeps`` says how often and how far; ``retention`` scores the memories; each
    sweep that archived something is recorded in the audit trail (``trust``: how long
    it keeps entries), by ``worker:<name>``.

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
        trust: TrustSettings | None = None,
        *,
        by: str = "worker",
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._sweeps = sweeps
        self._retention = retention
        self._trust = trust or TrustSettings()
        self._by = by
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
        planned: list[str] = []
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
                planned_ids=planned,
            )
            if report.archived:
                await record_audit(
                    self._redis,
                    self._keys,
                    "sweep",
                    self._by,
                    retention_days=self._trust.audit_retention_days,
                    how="settings",
                    ids=planned,
                    archived=report.archived,
                    kept_changed=report.kept_changed,
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
