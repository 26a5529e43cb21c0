"""Forgetting: archive one memory (``forget``), sweep a namespace by retention score.

A sweep has two halves. ``plan_sweep`` reads every active memory of the
namespace (ids from the index a page of ``batch`` at a time, then their fields
by ``HMGET``: exact values, not the index's rounded copies), scores them all
(``retention.retention_parts``) and picks the victims: the unprotected ones
under the threshold, and the lowest beyond ``max_active``. ``apply_sweep``
archives them ``batch`` at a time, ``scripts.MEMORIES_PER_CALL`` per script
call (an archived memory is re-indexed, so one call never holds Redis long).
The script re-checks every memory, so one read, written to, protected or
restored since the plan stays active.
Only the holder of the namespace's lease (``SweepLease``) sweeps; a crash
leaves each memory either archived or not, and a rerun finishes the job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import aggregate_page, as_text
from hindsight_redis.errors import (
    HindsightError,
    InvalidArgument,
    RedisCommandError,
    SweepBusy,
    redis_errors,
)
from hindsight_redis.index.filters import tag_clause
from hindsight_redis.lifecycle.retention import (
    SCORED_FIELDS,
    RetentionPolicy,
    pick_victims,
    score_fields,
)
from hindsight_redis.redis import scripts

log = logging.getLogger(__name__)


# -- forget -----------------------------------------------------------------------


async def archive_memory(
    redis: Redis, keys: Keys, memory_id: str, *, force: bool = False, now: float | None = None
) -> int:
    """Archive one memory: 1 done (or already archived), 0 no such memory, -1 protected."""
    reason = "forgotten (forced: it was protected)" if force else "forgotten"
    with redis_errors("archive the memory"):
        code = await scripts.archive_one(
            redis,
            memory=keys.doc(memory_id),
            force=force,
            now=f"{time.time() if now is None else now:.6f}",
            reason=reason,
        )
    return int(code)


# -- the lease --------------------------------------------------------------------


class SweepLease:
    """The one-sweeper-per-namespace lease: ``SET NX PX``, renewed by each step.

    The holder is ``host:pid:token``; a lease left by a dead process of this
    host (kill -9) is taken over at once instead of waiting for it to expire.
    """

    def __init__(self, redis: Redis, keys: Keys, ttl_s: float) -> None:
        self._redis = redis
        self._key = keys.sweep_lease
        self._ttl_ms = max(int(ttl_s * 1000), 1)
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    async def acquire(self) -> None:
        """Take the lease, or raise ``SweepBusy`` naming who holds it."""
        with redis_errors("take the sweep lease"):
            reply = await scripts.lease_acquire(
                self._redis, lease=self._key, holder=self.holder, ttl_ms=self._ttl_ms, stale=""
            )
            if int(reply[0]) == 1:
                return
            current, left_ms = as_text(reply[1]), int(reply[2])
            if _dead_here(current):
                reply = await scripts.lease_acquire(
                    self._redis,
                    lease=self._key,
                    holder=self.holder,
                    ttl_ms=self._ttl_ms,
                    stale=current,
                )
                if int(reply[0]) == 1:
                    log.warning("took over the sweep lease of %s (process gone)", current)
                    return
        raise SweepBusy(
            f"another sweep of this namespace is running ({current}); "
            f"its lease expires within {max(left_ms, 0) / 1000:.0f} s unless renewed"
        )

    async def renew(self) -> None:
        """Extend the lease; ``SweepBusy`` when it was lost (expired and taken)."""
        with redis_errors("renew the sweep lease"):
            kept = await scripts.lease_renew(
                self._redis, lease=self._key, holder=self.holder, ttl_ms=self._ttl_ms
            )
        if not kept:
            raise SweepBusy("the sweep lease expired and another sweeper took it; stopping")

    async def release(self) -> None:
        """Give the lease back (no-op when it is not held)."""
        with redis_errors("release the sweep lease"):
            await scripts.lease_release(self._redis, lease=self._key, holder=self.holder)


def _dead_here(holder: str) -> bool:
    """True when ``holder`` names a process of this host that no longer exists."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, owned by someone else
    return False


# -- plan -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweepCandidate:
    """A memory a sweep archives (or would): its score, the parts of it, and why."""

    id: str
    score: float
    parts: dict[str, float]
    reason: str
    snippet: str = ""


@dataclass(slots=True)
class SweepPlan:
    """What a sweep will archive, lowest score first, and the state it was computed on."""

    namespace: str
    now: float
    threshold: float | None
    max_active: int | None
    active: int
    protected: int
    victims: list[SweepCandidate] = field(default_factory=list)
    seen: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Per victim: the access_count and last_accessed_at it was scored with."""


@dataclass(slots=True)
class SweepReport:
    """What a sweep did (or, in a dry run, would do).

    ``lowest`` lists the first victims, lowest score first, with their
    parts and a snippet. ``kept_changed``: victims left active because they
    changed during the sweep (read, protected, restored, deleted).
    ``interrupted``: stopped before the end (a worker shutting down); a
    rerun finishes.
    """

    namespace: str
    dry_run: bool
    threshold: float | None
    max_active: int | None
    active_before: int
    protected: int
    to_archive: int
    archived: int = 0
    kept_changed: int = 0
    active_after: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False
    lowest: list[SweepCandidate] = field(default_factory=list)


def check_sweep_args(threshold: float | None, max_active: int | None, batch: int) -> None:
    """``InvalidArgument`` unless the sweep's limits are usable."""
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0.0 <= threshold <= 1.0
    ):
        raise InvalidArgument(f"threshold must be a number from 0 to 1, got {threshold!r}")
    if max_active is not None and (
        isinstance(max_active, bool) or not isinstance(max_active, int) or max_active < 0
    ):
        raise InvalidArgument(f"max_active must be an integer >= 0, got {max_active!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 100_000:
        raise InvalidArgument(f"batch must be an integer from 1 to 100000, got {batch!r}")
    if threshold is None and max_active is None:
        raise InvalidArgument("a sweep needs a threshold, a max_active, or both")


async def memory_ids(redis: Redis, keys: Keys, status: str | None, batch: int) -> list[str]:
    """Ids of the namespace's memories of ``status`` (None: any), from the index.

    Read through an ``FT.AGGREGATE`` cursor, ``batch`` ids per round trip.
    """
    query = tag_clause("namespace", keys.namespace)
    if status is not None:
        query += " " + tag_clause("status", status)
    ids: list[str] = []
    try:
        with redis_errors("list the memories"):
            reply = await redis.execute_command(  # type: ignore[no-untyped-call]
                "FT.AGGREGATE",
                keys.index_alias,
                query,
                "LOAD",
                "1",
                "@__key",
                "WITHCURSOR",
                "COUNT",
                str(batch),
                "MAXIDLE",
                "300000",
                "DIALECT",
                "2",
            )
            while True:
                rows, cursor = aggregate_page(reply)
                ids += [as_text(r.get("__key")).removeprefix(keys.doc_prefix) for r in rows]
                if cursor == 0:
                    return ids
                reply = await redis.execute_command(  # type: ignore[no-untyped-call]
                    "FT.CURSOR", "READ", keys.index_alias, str(cursor), "COUNT", str(batch)
                )
    except RedisCommandError as e:
        if "index" in e.reply.lower():
            return []  # nothing was ever indexed in this namespace
        raise


async def plan_sweep(
    redis: Redis,
    keys: Keys,
    policy: RetentionPolicy,
    *,
    threshold: float | None,
    max_active: int | None,
    batch: int = 1000,
    pending_hits: dict[str, int] | None = None,
    now: float | None = None,
) -> SweepPlan:
    """Score every active memory and pick what a sweep archives (lowest first).

    ``pending_hits``: access-log counts not yet folded into the memories
    (``pending_access``): they count as reads made now.
    """
    now = time.time() if now is None else now
    ids = await memory_ids(redis, keys, "active", batch)
    rows: list[list[object]] = []
    with redis_errors("read the memories to score"):
        for start in range(0, len(ids), batch):
            pipe = redis.pipeline(transaction=False)
            for memory_id in ids[start : start + batch]:
                pipe.hmget(keys.doc(memory_id), list(SCORED_FIELDS))
            rows += await pipe.execute()
    found = [
        (i, [as_text(v) for v in row])
        for i, row in zip(ids, rows, strict=True)
        if any(v is not None for v in row)  # else deleted since it was listed
    ]
    plan = SweepPlan(keys.namespace, now, threshold, max_active, len(found), 0)
    if not found:
        return plan
    hits = pending_hits or {}
    parts, protected = score_fields(
        policy, [r for _, r in found], pending_hits=[hits.get(i, 0) for i, _ in found], now=now
    )
    plan.protected = int(protected.sum())
    picked = pick_victims(parts.score, protected, threshold=threshold, max_active=max_active)
    for n in picked:
        memory_id, raw = found[n]
        score = float(parts.score[n])
        if threshold is not None and score < threshold:
            reason = f"sweep: retention {score:.3f} below the threshold {threshold:g}"
        else:
            reason = f"sweep: retention {score:.3f}, lowest beyond max_active {max_active}"
        plan.victims.append(SweepCandidate(memory_id, score, parts.row(int(n)), reason))
        plan.seen[memory_id] = (raw[0] or "0", raw[1] or "0")
    return plan


# -- apply ------------------------------------------------------------------------


async def apply_sweep(
    redis: Redis,
    keys: Keys,
    plan: SweepPlan,
    *,
    batch: int = 1000,
    lease: SweepLease | None = None,
    should_stop: Callable[[], bool] | None = None,
    redis_share: float = 1.0,
) -> tuple[int, int, bool]:
    """Archive the plan's victims; (archived, kept because changed, interrupted).

    ``redis_share`` (0..1]: after each script call, pause so that calls take
    at most this share of the time (archiving re-indexes each memory: at
    1.0 a sweep keeps Redis busy, and searches wait behind it).
    """
    stamp = f"{time.time():.6f}"
    archived = 0
    pause = (1.0 - redis_share) / redis_share
    for start in range(0, len(plan.victims), batch):
        if should_stop is not None and should_stop():
            return archived, 0, True
        if lease is not None:
            await lease.renew()
        step = plan.victims[start : start + batch]
        for offset in range(0, len(step), scripts.MEMORIES_PER_CALL):
            chunk = step[offset : offset + scripts.MEMORIES_PER_CALL]
            args: list[str] = []
            for victim in chunk:
                count, last = plan.seen[victim.id]
                args += [victim.id, count, last, victim.reason]
            called = time.monotonic()
            with redis_errors("archive memories"):
                archived += int(
                    await scripts.archive_if_unchanged(
                        redis,
                        access_log=keys.access_log,
                        memories=[keys.doc(v.id) for v in chunk],
                        now=stamp,
                        plan=args,
                    )
                )
            if pause > 0:
                await asyncio.sleep((time.monotonic() - called) * pause)
    return archived, len(plan.victims) - archived, False


async def pending_access(redis: Redis, keys: Keys) -> dict[str, int]:
    """The access log's counts not yet folded into the memories (read only)."""
    with redis_errors("read the access log"):
        return {as_text(k): int(v) async for k, v in redis.hscan_iter(keys.access_log, count=1000)}


async def snippets(
    redis: Redis, keys: Keys, ids: Sequence[str], width: int | None = None
) -> list[str]:
    """Each memory's content, its spaces collapsed: whole (a table cuts it to the terminal,
    a pipe prints it all), or its first ``width`` characters."""
    with redis_errors("read the memories' content"):
        pipe = redis.pipeline(transaction=False)
        for memory_id in ids:
            pipe.hget(keys.doc(memory_id), "content")
        contents = await pipe.execute()
    return [" ".join(as_text(c).split())[:width] for c in contents]  # [:None]: whole


async def sweep(
    redis: Redis,
    keys: Keys,
    policy: RetentionPolicy,
    *,
    threshold: float | None,
    max_active: int | None,
    dry_run: bool = False,
    batch: int = 1000,
    lease_s: float = 30.0,
    show: int = 20,
    should_stop: Callable[[], bool] | None = None,
    redis_share: float = 0.5,
    planned_ids: list[str] | None = None,
) -> SweepReport:
    """Plan a sweep and, unless ``dry_run``, apply it under the namespace's lease.

    A dry run changes nothing. ``show``: how many victims ``lowest`` lists (0: all).
    ``redis_share``: see ``apply_sweep``. ``planned_ids`` gets the ids of the memories
    the sweep set out to archive (``kept_changed`` of them stayed active).
    """
    check_sweep_args(threshold, max_active, batch)
    started = time.monotonic()
    lease = None if dry_run else SweepLease(redis, keys, lease_s)
    if lease is not None:
        await lease.acquire()
    try:
        # Reads not folded into the memories yet count in the scores; they are
        # not folded here (that would re-index each read memory, beside searches).
        plan = await plan_sweep(
            redis,
            keys,
            policy,
            threshold=threshold,
            max_active=max_active,
            batch=batch,
            pending_hits=await pending_access(redis, keys),
        )
        report = SweepReport(
            keys.namespace,
            dry_run,
            threshold,
            max_active,
            plan.active,
            plan.protected,
            len(plan.victims),
        )
        if not dry_run:
            if planned_ids is not None:
                planned_ids.extend(v.id for v in plan.victims)
            if lease is not None:
                await lease.renew()
            report.archived, report.kept_changed, report.interrupted = await apply_sweep(
                redis,
                keys,
                plan,
                batch=batch,
                lease=lease,
                should_stop=should_stop,
                redis_share=redis_share,
            )
    finally:
        if lease is not None:
            with contextlib.suppress(HindsightError):
                await lease.release()
    shown = plan.victims if show == 0 else plan.victims[:show]
    texts = await snippets(redis, keys, [v.id for v in shown])
    report.lowest = [
        SweepCandidate(v.id, v.score, v.parts, v.reason, text)
        for v, text in zip(shown, texts, strict=True)
    ]
    report.active_after = plan.active - (report.to_archive if dry_run else report.archived)
    report.elapsed_s = round(time.monotonic() - started, 3)
    return report
