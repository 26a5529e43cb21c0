"""Plain text for people: search hits, conflicts and the audit trail as tables, stats and
an erasure's receipt as aligned lines.

Pure module (no I/O): the CLI prints what these return; ``--json`` prints the
data instead.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hindsight_redis.core.models import MemoryRecord, SearchHit

if TYPE_CHECKING:
    from hindsight_redis.lifecycle.forgetting import SweepReport
    from hindsight_redis.trust.audit import AuditEntry
    from hindsight_redis.trust.erasure import ErasureReceipt


def age(created_at: float, now: float | None = None) -> str:
    """How long ago, shortly: ``"42s"``, ``"5m"``, ``"3h"``, ``"2d"``, ``"4mo"``, ``"1y"``."""
    seconds = max((time.time() if now is None else now) - created_at, 0.0)
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("d", 86400), ("h", 3600)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds // 60)}m" if seconds >= 60 else f"{int(seconds)}s"


def _cells(ch: str) -> int:
    """Terminal cells of one character: 2 for wide (CJK) ones."""
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def snippet(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` terminal cells (with an ellipsis when cut)."""
    flat = " ".join(text.split())
    if sum(map(_cells, flat)) <= width:
        return flat
    out, used = [], 0
    for ch in flat:
        if used + _cells(ch) > width - 1:
            break
        out.append(ch)
        used += _cells(ch)
    return "".join(out) + "…"


def fit(text: str, width: int) -> str:
    """``snippet(text, width)`` padded with spaces to exactly ``width`` cells."""
    cut = snippet(text, width)
    return cut + " " * (width - sum(map(_cells, cut)))


def _score(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.2f}"


def day(seconds: float) -> str:
    """A unix time as its UTC date (``2023-05-08``): when a memory's event happened."""
    try:
        return datetime.fromtimestamp(seconds, UTC).date().isoformat()
    except (OverflowError, ValueError, OSError):
        return f"{seconds:.0f}"


def hits_table(hits: Sequence[SearchHit], *, width: int = 100, now: float | None = None) -> str:
    """Search hits as a table: rank, fused score, the legs' scores, agent, age, snippet."""
    if not hits:
        return "no memory matches"
    agent_width = min(max(len("agent"), *(len(h.agent_id) for h in hits)), 16)
    scores = f"{'fused':>5} {'vec':>5} {'kw':>5} {'ctx':>5}"
    rows = [f"{'#':>2}  {scores}  {'agent':<{agent_width}}  {'age':>4}  memory"]
    for rank, hit in enumerate(hits, start=1):
        line = (
            f"{rank:>2}  {hit.fused:5.2f} {_score(hit.vector)} {_score(hit.keyword)} "
            f"{_score(hit.contextual)}  {fit(hit.agent_id or '-', agent_width)}"
            f"  {age(hit.created_at, now):>4}  "
        )
        text = hit.content if hit.occurred_at is None else f"[{day(hit.occurred_at)}] {hit.content}"
        rows.append(line + snippet(text, max(width - len(line), 20)))
    return "\n".join(rows)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _held(stats: Mapping[str, Any]) -> str:
    """Writes held for review, and what became of them."""
    held, approved = int(stats.get("held", 0)), int(stats.get("approved", 0))
    rejected = int(stats.get("rejected", 0))
    if not (approved or rejected):
        return _count(held)
    return f"{_count(held)}  ({approved:,} approved, {rejected:,} rejected)"


def stats_lines(stats: Mapping[str, Any]) -> str:
    """``stats()`` as aligned ``name  value`` lines, the live workers last."""
    dropped = dict(stats.get("dropped", {}))
    total = dropped.pop("total", 0)
    reasons = ", ".join(f"{reason} {count:,}" for reason, count in sorted(dropped.items()))
    refine = stats.get("refine_pending")
    rows: list[tuple[str, str]] = [
        ("accepted", _count(stats.get("accepted", 0))),
        ("processed", _count(stats.get("processed", 0))),
        ("indexed", _count(stats.get("indexed", 0))),
        ("merged", _count(stats.get("merged", 0))),
        ("dropped", _count(total) + (f"  ({reasons})" if reasons else "")),
        ("held", _held(stats)),
        ("backlog", _count(stats.get("backlog", 0))),
        ("pending", _count(stats.get("pending", 0))),
        ("dead letters", _count(stats.get("dead_letters", 0))),
        ("index lag", f"{float(stats.get('index_lag_s', 0.0)):.1f} s"),
        ("refine pending", "no index yet" if refine is None else _count(refine)),
    ]
    memories = stats.get("memories")
    if memories:
        rows.insert(
            3,
            (
                "memories",
                f"{memories['active']:,} active ({memories['protected']:,} protected), "
                f"{memories['archived']:,} archived",
            ),
        )
    workers = stats.get("workers", [])
    summary = f"{len(workers)} live" if workers else "none live (start `hindsight-redis worker`)"
    idle = stats.get("idle_consumers", 0)
    if idle:
        summary += f", {idle} gone quiet"
    rows.append(("workers", summary))
    for worker in workers:
        detail = f"pending {worker['pending']:,}, seen {worker['idle_s']:.1f} s ago"
        rows.append(("", f"{worker['name']}  ({detail})"))
    name_width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{name_width}}  {value}".rstrip() for name, value in rows)


def sweep_lines(report: SweepReport, *, width: int = 100) -> str:
    """A sweep's report: what it archived (or would), and its lowest memories as a table."""
    limits = []
    if report.threshold is not None:
        limits.append(f"threshold {report.threshold:g}")
    if report.max_active is not None:
        limits.append(f"max_active {report.max_active:,}")
    verb = "would archive" if report.dry_run else "archived"
    done = report.to_archive if report.dry_run else report.archived
    head = (
        f"{'dry run: ' if report.dry_run else ''}{report.namespace}: {verb} {done:,} of "
        f"{report.active_before:,} active memories ({', '.join(limits)}); "
        f"{report.protected:,} protected never are; {report.active_after:,} stay active"
    )
    lines = [head]
    if report.kept_changed:
        lines.append(f"{report.kept_changed:,} kept: read or changed during the sweep")
    if report.interrupted:
        lines.append("stopped before the end: run the sweep again to finish")
    if report.lowest:
        parts = f"{'score':>5} {'freq':>5} {'rec':>5} {'write':>5}"
        lines.append(f"\n{'id':<32}  {parts}  memory")
        for c in report.lowest:
            p = c.parts
            row = (
                f"{c.id:<32}  {c.score:5.3f} {p['frequency']:5.2f} {p['recency']:5.2f} "
                f"{p['write']:5.2f}  "
            )
            lines.append(row + snippet(c.snippet, max(width - len(row), 20)))
        more = report.to_archive - len(report.lowest)
        if more > 0:
            lines.append(f"... and {more:,} more (--show 0 lists all)")
    return "\n".join(lines)


def conflicts_table(
    records: Sequence[MemoryRecord], *, width: int = 100, now: float | None = None
) -> str:
    """Flagged memories: id, age, agent, the ids each contradicts, and a snippet."""
    if not records:
        return "no open conflict"
    rows = [f"{'id':<32}  {'age':>4}  {'agent':<12}  {'conflicts with':<14}  memory"]
    for record in records:
        others = ",".join(o[:6] for o in record.conflicts_with)
        line = (
            f"{record.id:<32}  {age(record.created_at, now):>4}  "
            f"{fit(record.agent_id or '-', 12)}  {fit(others, 14)}  "
        )
        rows.append(line + snippet(record.content, max(width - len(line), 20)))
    rows.append(
        "\nresolve: hindsight-redis conflicts resolve <id> --keep new|old|both [--note ...]"
    )
    return "\n".join(rows)


def held_table(
    records: Sequence[MemoryRecord], *, width: int = 100, now: float | None = None
) -> str:
    """Writes held for review: id, age, writer, why, and a snippet of what they say."""
    if not records:
        return "nothing held for review"
    rows = [f"{'id':<32}  {'age':>4}  {'writer':<12}  {'why':<22}  write"]
    for record in records:
        why = (record.hold_reason or "").split(" ", 1)[0]
        line = (
            f"{record.id:<32}  {age(record.created_at, now):>4}  "
            f"{fit(record.agent_id or '-', 12)}  {fit(why, 22)}  "
        )
        rows.append(line + snippet(record.content, max(width - len(line), 20)))
    rows.append("\ndecide: hindsight-redis review approve <id> | review reject <id>")
    return "\n".join(rows)


def moment(seconds: float) -> str:
    """A unix time as UTC, to the second (``2026-12-03 11:02:53``)."""
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):
        return f"{seconds:.0f}"


def audit_table(entries: Sequence[AuditEntry], *, width: int = 110) -> str:
    """Audit entries, newest first: when (UTC), action, who (identified how), how many
    memories (the first ids), and the details."""
    if not entries:
        return "no audit entry"
    by_width = min(max(len("by"), *(len(e.by) for e in entries)), 20)
    rows = [f"{'when (UTC)':<19}  {'action':<7}  {'by':<{by_width}}  {'how':<8}  {'n':>5}  what"]
    for e in entries:
        what = ",".join(i[:8] for i in e.ids[:3]) + ("…" if e.count > 3 else "")
        details = " ".join(f"{k}={v}" for k, v in e.details.items())
        line = (
            f"{moment(e.at):<19}  {e.action:<7}  {fit(e.by, by_width)}  {fit(e.how or '-', 8)}"
            f"  {e.count:>5}  "
        )
        rows.append(
            line + snippet(" ".join(filter(None, (what, details))), max(width - len(line), 20))
        )
    return "\n".join(rows)


def erasure_lines(receipt: ErasureReceipt) -> str:
    """An erasure's receipt: what was (or would be) erased where, the files left to delete."""
    verb = "would erase" if receipt.dry_run else "erased"
    criteria = "; ".join(f"{k} {', '.join(v)}" for k, v in receipt.selector.items())
    asked = receipt.by + (f" ({receipt.how})" if receipt.how else "")
    lines = [
        f"{'dry run: ' if receipt.dry_run else ''}{receipt.namespace}: {verb} "
        f"{receipt.count:,} write(s) named by {criteria}; asked by {asked} at {moment(receipt.at)}"
    ]
    lines += [f"  {place:<17} {n:,}" for place, n in receipt.erased.items() if n]
    if receipt.digest:
        lines.append(f"  {'ids digest':<17} {receipt.digest}")
    for record in receipt.exports:
        lines.append(
            f"  still in the export {record.path} ({record.holding:,} of them, written "
            f"{moment(record.exported_at)}): delete or rewrite it"
        )
    if receipt.audit_id:
        lines.append(f"  recorded in the audit trail ({receipt.audit_id})")
    lines += [f"  {note}" for note in receipt.persistence]
    return "\n".join(lines)
