"""What acts on a namespace as a whole: retention, cold storage, the operators' reads, the
review of held writes, erasure and the audit trail.

``PoolOperations`` is composed into ``AsyncMemoryClient`` (``client.pool``)
and each of its methods is offered on the client as well (``on_pool``:
``client.sweep(...)`` is ``client.pool.sweep(...)``, with the same
signature and docstring). It reaches Redis, the caller's identity and single
memories through its host, the client (``PoolHost``). What changes memories
(sweeps, purges, imports, conflict resolutions, erasures) is recorded in the
namespace's audit trail with who asked (``record``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any, Concatenate, Generic, Literal, ParamSpec, Protocol, TypeVar, overload

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryRecord, WriteReceipt
from hindsight_redis.errors import InvalidArgument, InvalidMemory, NotFound
from hindsight_redis.lifecycle.cold import (
    ExportReport,
    ImportReport,
    Progress,
    PurgeReport,
    export_memories,
    import_memories,
    purge_exported,
)
from hindsight_redis.lifecycle.conflicts import check_resolution, list_resolutions, resolve_pairs
from hindsight_redis.lifecycle.forgetting import SweepReport, sweep
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.lifecycle.review import ConflictResolution, Keep
from hindsight_redis.ops import admin
from hindsight_redis.ops.admin import DeadLetter
from hindsight_redis.providers.spend import SpendBudget
from hindsight_redis.settings import Settings
from hindsight_redis.trust.audit import ACTIONS, AuditEntry, read_audit, record_audit
from hindsight_redis.trust.erasure import ErasureReceipt, erase, selector_of
from hindsight_redis.trust.held import HeldState, approve_held, list_held, reject_held
from hindsight_redis.write.writer import StreamWriter


class PoolHost(Protocol):
    """What the pool operations need of the client that holds them."""

    settings: Settings
    keys: Keys

    async def connect(self) -> Redis:
        """The connection, opened on first use."""
        ...

    async def get(self, memory_id: str, *, as_agent: str | None = None) -> MemoryRecord | None:
        """One memory as the caller sees it."""
        ...

    def caller(self, as_agent: str | None = None) -> str:
        """Who a call acts as."""
        ...

    def provenance(self, as_agent: str | None = None) -> str:
        """How the caller of a call was identified."""
        ...

    def index_changed(self) -> None:
        """The index may have been created or rebuilt: the next search opens it anew."""
        ...


class PoolOperations:
    """Sweeps, export/purge/import, stats, dead letters, conflicts, held writes, reindex,
    erasure and the audit trail."""

    def __init__(self, host: PoolHost) -> None:
        self.host = host

    @property
    def settings(self) -> Settings:
        """The host's settings."""
        return self.host.settings

    @property
    def keys(self) -> Keys:
        """The host's keys (its namespace)."""
        return self.host.keys

    async def connect(self) -> Redis:
        """The host's connection."""
        return await self.host.connect()

    # -- retention --------------------------------------------------------------

    async def sweep(
        self,
        *,
        dry_run: bool = False,
        threshold: float | None = None,
        max_active: int | None = None,
        batch: int | None = None,
        show: int = 20,
    ) -> SweepReport:
        """Archive the active memories with the lowest retention scores.

        Those under ``threshold`` and/or the lowest beyond ``max_active``
        (defaults: ``sweep_threshold`` and ``sweep_max_active``, when neither
        is given); never a protected one. ``dry_run`` changes nothing and
        reports what would be archived; ``show`` victims are listed with their
        scores (0: all). ``SweepBusy`` when another sweep of the namespace runs.
        """
        sweeps = self.settings.sweeps
        if threshold is None and max_active is None:
            threshold, max_active = sweeps.sweep_threshold, sweeps.sweep_max_active
        planned: list[str] = []
        report = await sweep(
            await self.connect(),
            self.keys,
            RetentionPolicy.from_settings(self.settings.retention),
            threshold=threshold,
            max_active=max_active,
            dry_run=dry_run,
            batch=sweeps.sweep_batch if batch is None else batch,
            lease_s=sweeps.sweep_lease_s,
            show=show,
            redis_share=sweeps.sweep_redis_share,
            planned_ids=planned,
        )
        if not dry_run:
            await self.record(
                "sweep", ids=planned, archived=report.archived, kept_changed=report.kept_changed
            )
        return report

    async def export(
        self, path: str | Path, *, status: str = "archived", progress: Progress | None = None
    ) -> ExportReport:
        """Write the memories of ``status`` (archived, active, all) to a ``.jsonl.gz`` file.

        Every field and both vectors; a header line names the namespace and
        models. ``progress(done, total)`` is called as it goes.
        """
        return await export_memories(
            await self.connect(), self.keys, Path(path), status=status, progress=progress
        )

    async def purge_exported(
        self, path: str | Path, *, progress: Progress | None = None
    ) -> PurgeReport:
        """Delete the archived memories that are in an export file and unchanged since."""
        removed: list[str] = []
        report = await purge_exported(
            await self.connect(), self.keys, Path(path), progress=progress, removed_ids=removed
        )
        await self.record("purge", ids=removed, removed=report.removed, file=_shown(path))
        return report

    async def import_file(
        self, path: str | Path, *, progress: Progress | None = None
    ) -> ImportReport:
        """Restore an export file into this namespace; memories already present are kept,
        and so are those erased since the export (``erase``)."""
        imported: list[str] = []
        report = await import_memories(
            await self.connect(),
            self.keys,
            self.settings.index,
            self.settings.search,
            self.settings.embedding,
            Path(path),
            progress=progress,
            imported_ids=imported,
        )
        self.host.index_changed()  # the import may have created the index
        await self.record("import", ids=imported, imported=report.imported, file=_shown(path))
        return report

    # -- the operators' side ------------------------------------------------------

    async def stats(self) -> dict[str, Any]:
        """Counters and stream state; see ``admin.collect_stats``."""
        return await admin.collect_stats(
            await self.connect(),
            self.keys,
            live_within_ms=self.settings.worker.claim_idle_ms,
            budget=SpendBudget.of(self.settings.llm),
            retention=RetentionPolicy.from_settings(self.settings.retention),
            sweep_threshold=self.settings.sweeps.sweep_threshold,
        )

    async def why_no_hit(self) -> str | None:
        """Why a search may find nothing here, when cheap reads can tell (never written to,
        writes waiting for a worker, all dropped); see ``admin.why_no_hit``."""
        return await admin.why_no_hit(
            await self.connect(), self.keys, live_within_ms=self.settings.worker.claim_idle_ms
        )

    async def dead_letters(self, count: int = 100) -> list[DeadLetter]:
        """The oldest dead-lettered writes, with their errors."""
        return await admin.list_dead_letters(await self.connect(), self.keys, count)

    async def replay_dead_letters(self, ids: list[str] | None = None) -> list[str]:
        """Put dead letters (all, or those ids) back on the stream; their new stream ids."""
        return await admin.replay_dead_letters(await self.connect(), self.keys, ids)

    async def conflicts(self, limit: int = 100) -> list[MemoryRecord]:
        """Memories flagged for review because they contradict another (newest first)."""
        return await admin.list_conflicts(await self.connect(), self.keys, limit=limit)

    async def resolve_conflict(
        self,
        memory_id: str,
        keep: Keep,
        *,
        other_id: str | None = None,
        note: str | None = None,
        as_agent: str | None = None,
    ) -> list[ConflictResolution]:
        """Decide a flagged contradiction between ``memory_id`` and the memories it conflicts with.

        ``keep="new"`` archives the older memory of each pair (``superseded_by``
        the newer), ``"old"`` the newer one, ``"both"`` only clears the flag;
        ``other_id`` limits it to that pair. Who decided (the caller, else
        ``operator``), when and ``note`` are recorded on both memories and in
        the log (``conflict_resolutions``); ``restore`` of either memory undoes
        it. ``InvalidArgument`` when there is no open conflict to decide.
        """
        keep, text = check_resolution(keep, note)
        record = await self.host.get(memory_id, as_agent=as_agent)
        if record is None:
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")
        others = list(record.conflicts_with)
        if other_id is not None:
            if other_id not in others:
                raise InvalidArgument(
                    f"memory {memory_id!r} has no open conflict with {other_id!r} "
                    f"(open: {', '.join(others) or 'none'})"
                )
            others = [other_id]
        visible = [o for o in others if await self.host.get(o, as_agent=as_agent) is not None]
        if not visible:
            raise InvalidArgument(f"memory {memory_id!r} has no open conflict to resolve")
        done = await resolve_pairs(
            await self.connect(),
            self.keys,
            memory_id,
            visible,
            keep=keep,
            by=self.host.caller(as_agent) or "operator",
            note=text,
        )
        if done:  # the note stays in the resolutions log: the trail holds no text
            archived = [d.archived for d in done if d.archived]
            await self.record(
                "resolve",
                as_agent=as_agent,
                ids=[memory_id, *(d.other_id for d in done)],
                keep=keep,
                archived=len(archived),
            )
        return done

    async def conflict_resolutions(self, count: int = 100) -> list[ConflictResolution]:
        """The latest conflict resolutions and their undoings (who, when, why), newest first."""
        return await list_resolutions(await self.connect(), self.keys, count)

    # -- the review of held writes --------------------------------------------------

    async def held(
        self, *, state: HeldState | Literal["all"] = "held", limit: int = 100
    ) -> list[MemoryRecord]:
        """The writes held for review, newest first: status ``held``, ``hold_reason`` (why),
        the content as written, its writer and ``provenance``. ``state="rejected"``: those
        rejected (kept for the record), ``"all"``: both. Never indexed, never searchable."""
        found = await list_held(await self.connect(), self.keys, state=state, limit=limit)
        return [h.record() for h in found]

    async def approve(
        self,
        memory_id: str,
        *,
        wait: bool = False,
        timeout_s: float | None = None,
        as_agent: str | None = None,
    ) -> WriteReceipt:
        """Release a held write: it goes back to the workers as reviewed (no check holds it
        again, the write score does not drop it) and is indexed as any write, its memory
        marked ``reviewed``. ``wait=True`` returns once it is processed (within
        ``timeout_s``, default ``write_wait_timeout_s``). Recorded in the audit trail with
        who approved (the caller, else ``operator``). ``NotFound`` when no write is held
        under this id, ``InvalidArgument`` when it was rejected."""
        _check_held_id(memory_id)
        redis = await self.connect()
        held, stream_id = await approve_held(
            redis,
            self.keys,
            memory_id,
            by=self.host.caller(as_agent) or "operator",
            how=self._how(as_agent),
            retention_days=self.settings.trust.audit_retention_days,
            notify=wait,
        )
        receipt = WriteReceipt(id=held.memory_id, status="accepted", stream_id=stream_id)
        if not wait:
            return receipt
        limits = self.settings.write
        waited = limits.write_wait_timeout_s if timeout_s is None else timeout_s
        return await StreamWriter(limits, self.keys).wait_outcome(redis, receipt, waited)

    async def reject(self, memory_id: str, *, as_agent: str | None = None) -> MemoryRecord:
        """Reject a held write: kept for the record (status ``rejected``, with who rejected
        it), never searchable. Recorded in the audit trail. ``NotFound`` when no write is
        held under this id; a rejected write stays rejected."""
        _check_held_id(memory_id)
        rejected = await reject_held(
            await self.connect(),
            self.keys,
            memory_id,
            by=self.host.caller(as_agent) or "operator",
            how=self._how(as_agent),
            retention_days=self.settings.trust.audit_retention_days,
            outcome_ttl_s=self.settings.worker.outcome_ttl_s,
        )
        return rejected.record()

    def _how(self, as_agent: str | None) -> str:
        """How the caller was identified, for the audit trail."""
        if as_agent is not None:
            return "argument"
        return "settings" if self.settings.agent_id else ""

    async def reindex(self, embedder: str) -> dict[str, Any]:
        """Rebuild the index under another embedder (``"local"``, ``"litellm:<model>"``...).

        Searches keep being served by the old index until the new one is
        complete; then the alias moves. Restart workers with the new embedder.
        The new index gets the configured ``contextual_embedder``'s field (its
        vectors are kept when the model is unchanged, else recomputed by the
        workers' refiners).
        """
        from hindsight_redis.index.reindex import reindex_namespace

        info = await reindex_namespace(
            await self.connect(),
            self.keys,
            self.settings.index,
            self.settings.search,
            self.settings.embedding,
            embedder,
        )
        self.host.index_changed()  # the next search re-opens against the new index
        return info

    # -- erasure and the audit trail ---------------------------------------------------

    async def erase(
        self,
        ids: str | Iterable[str] | None = None,
        *,
        agent_id: str | Iterable[str] | None = None,
        tag: str | Iterable[str] | None = None,
        session_id: str | Iterable[str] | None = None,
        source: str | Iterable[str] | None = None,
        dry_run: bool = False,
        as_agent: str | None = None,
    ) -> ErasureReceipt:
        """Erase every copy of the writes named: by ``ids``, writer (``agent_id``), ``tag``
        (e.g. ``user:alice``), ``session_id`` or ``source`` (each one value or several;
        what any of them names is erased).

        Every copy the namespace holds goes: the memories and the writes merged into
        them, their stream entries (processed or not: an unprocessed one is never
        indexed), dead letters, held writes, outcome and other per-write keys, drop-log
        lines, access counts, conflict links and resolutions, keyed items. The receipt
        says what went where, lists the export files still holding some of them (files
        are yours to delete), and is recorded in the audit trail with who asked (the
        caller, else ``operator``). ``dry_run`` finds and counts, and changes nothing.
        ``InvalidArgument`` when nothing is named.
        """
        if not isinstance(dry_run, bool):
            raise InvalidArgument("dry_run must be true or false")
        selector = selector_of(
            ids, agent_id=agent_id, tag=tag, session_id=session_id, source=source
        )
        return await erase(
            await self.connect(),
            self.keys,
            selector,
            by=self.host.caller(as_agent) or "operator",
            how=self.host.provenance(as_agent),
            dry_run=dry_run,
            retention_days=self.settings.trust.audit_retention_days,
        )

    async def audit(
        self,
        *,
        since: float | None = None,
        until: float | None = None,
        agent: str | None = None,
        action: str | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        """The audit trail, newest first: who wrote, approved, rejected, resolved, forgot,
        restored, swept, purged, imported and erased what (ids, counts and digests, never
        content); entries at or after ``since`` (unix seconds), by ``agent``, of
        ``action``; at most ``limit`` (1 to 10,000). ``until`` (unix seconds) leaves out
        the entries after it."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise InvalidArgument(f"limit must be an integer from 1 to 10000, got {limit!r}")
        for name, value in (("since", since), ("until", until)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):
                raise InvalidArgument(f"{name} must be unix seconds, got {value!r}")
        if action is not None and action not in ACTIONS:
            raise InvalidArgument(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
        if agent is not None and not isinstance(agent, str):
            raise InvalidArgument("agent must be a string")
        return await read_audit(
            await self.connect(),
            self.keys,
            since=since,
            until=until,
            agent=agent,
            action=action,
            count=limit,
        )

    async def record(
        self,
        action: str,
        *,
        as_agent: str | None = None,
        ids: Sequence[str] = (),
        **details: str | int | float,
    ) -> str:
        """Append an entry to the audit trail, by the caller (``as_agent``, else
        ``Settings.agent_id``, else ``operator``) as it was identified: ``action`` (one of
        ``trust.audit.ACTIONS``) on ``ids``, with short ``details`` (counts, ids, reasons:
        never a memory's text). Its stream id."""
        return await record_audit(
            await self.connect(),
            self.keys,
            action,
            self.host.caller(as_agent) or "operator",
            retention_days=self.settings.trust.audit_retention_days,
            how=self.host.provenance(as_agent),
            ids=list(ids),
            **details,
        )


def _shown(path: str | Path) -> str:
    """A file's path as an audit detail (its last 200 characters)."""
    return str(path)[-200:]


def _check_held_id(memory_id: object) -> None:
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 128:
        raise InvalidMemory("memory id must be a non-empty string of at most 128 characters")


P = ParamSpec("P")
T = TypeVar("T")
Method = Callable[Concatenate[PoolOperations, P], Coroutine[Any, Any, T]]


class on_pool(Generic[P, T]):
    """A method of ``PoolOperations`` offered on its host: ``host.sweep(...)`` runs
    ``host.pool.sweep(...)``. Read on the class, it is the method itself (its signature
    and docstring, for ``help()`` and the blocking client)."""

    def __init__(self, method: Method[P, T]) -> None:
        self.method = method

    @overload
    def __get__(self, host: None, owner: type) -> Method[P, T]: ...

    @overload
    def __get__(self, host: object, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(
        self, host: object, owner: type
    ) -> Method[P, T] | Callable[P, Coroutine[Any, Any, T]]:
        if host is None:
            return self.method
        pool: PoolOperations = host.pool  # type: ignore[attr-defined]
        bound: Callable[P, Coroutine[Any, Any, T]] = self.method.__get__(pool, PoolOperations)
        return bound
