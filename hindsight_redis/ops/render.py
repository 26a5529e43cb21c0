"""Plain text for people: search hits, conflicts, held writes, a sweep's lowest memories
and the audit trail as tables, stats and an erasure's receipt as aligned lines, the line
a long-running command says when it starts.

Pure module (no I/O): the CLI prints what these return, at the width ``layout.screen_width``
gives it (None, off a terminal: whole rows); ``--json`` prints the data instead.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hindsight_redis.core.models import MemoryRecord, SearchHit
from hindsight_redis.ops.layout import Column, changes, cut, flat, pad, table, wrap

if TYPE_CHECKING:
    from hindsight_redis.lifecycle.forgetting import SweepReport
    from hindsight_redis.ops.admin import DeadLetter
    from hindsight_redis.trust.audit import AuditEntry
    from hindsight_redis.trust.erasure import ErasureReceipt


def age(created_at: float, now: float | None = None) -> str:
    """How long ago, shortly: ``"42s"``, ``"5m"``, ``"3h"``, ``"2d"``, ``"4mo"``, ``"1y"``."""
    seconds = max((time.time() if now is None else now) - created_at, 0.0)
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("d", 86400), ("h", 3600)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds // 60)}m" if seconds >= 60 else f"{int(seconds)}s"


def snippet(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` terminal cells (with an ellipsis when cut)."""
    return cut(flat(text), width)


def fit(text: str, width: int) -> str:
    """``snippet(text, width)`` padded with spaces to exactly ``width`` cells."""
    return pad(flat(text), width)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def day(seconds: float) -> str:
    """A unix time as its UTC date (``2023-05-08``): when a memory's event happened."""
    try:
        return datetime.fromtimestamp(seconds, UTC).date().isoformat()
    except (OverflowError, ValueError, OSError):
        return f"{seconds:.0f}"


def hits_table(
    hits: Sequence[SearchHit], *, width: int | None = None, now: float | None = None
) -> str:
    """Search hits as a table: rank, fused score, the legs' scores, agent, age, the memory
    (``width`` None: whole rows)."""
    if not hits:
        return "no memory matches"
    columns = [
        Column("#", right=True),
        Column("fused", right=True),
        Column("vec", right=True, optional=True),
        Column("kw", right=True, optional=True),
        Column("ctx", right=True, optional=True),
        Column("agent", cap=16, least=8),
        Column("age", right=True, width=4),
    ]
    rows = [
        (
            str(rank),
            f"{hit.fused:.2f}",
            _score(hit.vector),
            _score(hit.keyword),
            _score(hit.contextual),
            hit.agent_id or "-",
            age(hit.created_at, now),
            hit.content if hit.occurred_at is None else f"[{day(hit.occurred_at)}] {hit.content}",
        )
        for rank, hit in enumerate(hits, start=1)
    ]
    return "\n".join(table(columns, "memory", rows, width=width))


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _held(stats: Mapping[str, Any]) -> str:
    """Writes held for review, and what became of them."""
    held, approved = int(stats.get("held", 0)), int(stats.get("approved", 0))
    rejected = int(stats.get("rejected", 0))
    if not (approved or rejected):
        return _count(held)
    return f"{_count(held)}  ({approved:,} approved, {rejected:,} rejected)"


def _share(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"


def health_rows(health: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """``stats()["health"]`` as ``(name, value)`` rows: the rates, the stale sample and the
    write-to-searchable latency (none without a health section)."""
    if not health:
        return []
    opened = health.get("conflicts_open")
    rates = (
        f"merged {_share(health.get('merge_rate'))}, dropped {_share(health.get('drop_rate'))}"
        f", conflicts {_share(health.get('conflict_rate'))} of indexed"
        + ("" if opened is None else f" ({opened:,} open)")
        + f", reviews kept new {_share(health.get('supersede_rate'))}"
    )
    stale = health.get("stale")
    if stale is None:
        stale_text = "not sampled (no sweep threshold, or no index yet)"
    else:
        sample = "all" if stale["exact"] else f"a sample of {stale['sampled']:,}"
        stale_text = (
            f"{_share(stale['fraction'])} under the sweep threshold {stale['threshold']:g} "
            f"({sample} of {stale['active']:,} active)"
        )
    latency = health.get("index_latency") or {}
    if latency.get("count"):
        searchable = (
            f"p50 {latency['p50_s']:.2f} s, p99 {latency['p99_s']:.2f} s "
            f"({latency['count']:,} writes indexed)"
        )
    else:
        searchable = "no write indexed yet"
    return [("health", rates), ("stale", stale_text), ("searchable in", searchable)]


def _refine(stats: Mapping[str, Any]) -> str:
    """Memories waiting for a contextual vector, how long the oldest has, the drafts, and the
    Chinese memories waiting for their multilingual vector."""
    pending, lag_s = stats.get("refine_pending"), stats.get("refine_lag_s")
    if pending is None:
        return "no index yet"
    notes = [f"the oldest waits {lag_s:.1f} s"] if pending and lag_s else []
    if drafts := stats.get("refine_drafts"):
        notes.append(f"{drafts:,} drafts to redo exactly")
    if chinese := stats.get("refine_chinese"):
        notes.append(f"{chinese:,} Chinese to embed")
    return _count(pending) + (f"  ({'; '.join(notes)})" if notes else "")


def _dollars(value: float) -> str:
    # A cheap model's call costs a few millionths of a dollar: cents would show nothing.
    return f"${value:,.2f}" if value >= 1 or value == 0 else f"${value:.6f}"


def spend_text(spend: Mapping[str, Any]) -> str:
    """A namespace's LLM spend today against its budget, in one line."""
    budget = spend.get("budget") or {}
    tokens = f"{spend.get('tokens', 0):,} tokens"
    if budget.get("tokens"):
        tokens += f" of {budget['tokens']:,}"
    usd = _dollars(float(spend.get("usd", 0.0)))
    if budget.get("usd"):
        usd += f" of {_dollars(float(budget['usd']))}"
    text = f"{tokens}, {usd}, {spend.get('calls', 0):,} calls"
    if spend.get("unpriced_calls"):
        text += f" ({spend['unpriced_calls']:,} unpriced)"
    if spend.get("budget_reached"):
        saved = int(spend.get("skipped_for_budget", 0))
        text += f"; budget reached: heuristics stand in ({saved:,} calls saved)"
    elif not (budget.get("tokens") or budget.get("usd")):
        text += "; no budget"
    return text


def stats_lines(stats: Mapping[str, Any]) -> str:
    """``stats()`` as aligned ``name  value`` lines, the live workers last."""
    dropped = dict(stats.get("dropped", {}))
    total = dropped.pop("total", 0)
    reasons = ", ".join(f"{reason} {count:,}" for reason, count in sorted(dropped.items()))
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
        ("refine pending", _refine(stats)),
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
    spend = stats.get("llm_spend")
    if spend:
        rows.append(("llm today", spend_text(spend)))
    rows += health_rows(stats.get("health"))
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


def sweep_lines(report: SweepReport, *, width: int | None = None) -> str:
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
        columns = [
            Column("id"),
            Column("score", right=True),
            *(Column(name, right=True, optional=True) for name in ("freq", "rec", "write")),
        ]
        rows = [
            (
                c.id,
                f"{c.score:.3f}",
                *(f"{c.parts[part]:.2f}" for part in ("frequency", "recency", "write")),
                c.snippet,
            )
            for c in report.lowest
        ]
        lines.append("")
        lines += table(columns, "memory", rows, width=width)
        more = report.to_archive - len(report.lowest)
        if more > 0:
            lines.append(f"... and {more:,} more (--show 0 lists all)")
    return "\n".join(lines)


def conflicts_table(
    records: Sequence[MemoryRecord],
    others: Mapping[str, MemoryRecord] | None = None,
    *,
    width: int | None = None,
    styled: bool = False,
    now: float | None = None,
) -> str:
    """Flagged memories, pair by pair (the newer first): which of the two, id, age, agent,
    and the memory with the words that differ from the other one marked (``styled``: in
    colour, else ``[-removed-]`` and ``{+added+}``); on a terminal the text is wrapped,
    never cut. ``others``: the memories they conflict with that are not among ``records``."""
    if not records:
        return "no open conflict"
    known = {**(others or {}), **{r.id: r for r in records}}
    columns = [
        Column(""),
        Column("id"),
        Column("age", right=True, width=4),
        Column("agent", cap=12, least=6),
    ]
    rows: list[tuple[str, ...]] = []
    seen: set[frozenset[str]] = set()
    for record in records:
        for other_id in record.conflicts_with or ("",):
            pair = frozenset((record.id, other_id))
            if pair in seen:
                continue
            seen.add(pair)
            other = known.get(other_id)
            if rows:
                rows.append(("",) * 5)
            if other is None:
                rows.append(_conflict_row("", record, record.content, now))
                if other_id:
                    rows.append(("", other_id, "", "", "(not readable here)"))
                continue
            new, old = (record, other) if record.created_at >= other.created_at else (other, record)
            old_text, new_text = changes(flat(old.content), flat(new.content), styled=styled)
            rows.append(_conflict_row("new", new, new_text, now))
            rows.append(_conflict_row("old", old, old_text, now))
    lines = table(columns, "memory", rows, width=width, wrap_text=True)
    lines += [
        "",
        *_said(
            "resolve: hindsight-redis conflicts resolve <id> --keep new|old|both "
            "[--with <other id>] [--note ...]",
            width,
        ),
    ]
    return "\n".join(line if line.strip() else "" for line in lines)


def _said(sentence: str, width: int | None) -> list[str]:
    """A sentence under a table: whole, or wrapped to the terminal's width."""
    return [sentence] if width is None else wrap(sentence, width)


def _conflict_row(
    which: str, record: MemoryRecord, text: str, now: float | None
) -> tuple[str, ...]:
    return (which, record.id, age(record.created_at, now), record.agent_id or "-", text)


def held_table(
    records: Sequence[MemoryRecord], *, width: int | None = None, now: float | None = None
) -> str:
    """Writes held for review: id, age, writer, why, and what they say."""
    if not records:
        return "nothing held for review"
    columns = [
        Column("id"),
        Column("age", right=True, width=4),
        Column("writer", cap=12, least=6),
        Column("why", cap=22, least=8),
    ]
    rows = [
        (
            record.id,
            age(record.created_at, now),
            record.agent_id or "-",
            (record.hold_reason or "").split(" ", 1)[0],
            record.content,
        )
        for record in records
    ]
    lines = table(columns, "write", rows, width=width)
    lines += ["", *_said("decide: hindsight-redis review approve <id> | review reject <id>", width)]
    return "\n".join(lines)


def moment(seconds: float) -> str:
    """A unix time as UTC, to the second (``2026-12-03 11:02:53``)."""
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):
        return f"{seconds:.0f}"


def audit_table(entries: Sequence[AuditEntry], *, width: int | None = None) -> str:
    """Audit entries, newest first: when (UTC), action, who (identified how), how many
    memories (the first ids), and the details."""
    if not entries:
        return "no audit entry"
    columns = [
        Column("when (UTC)"),
        Column("action", width=7),
        Column("by", cap=20, least=8),
        Column("how", width=8, optional=True),
        Column("n", right=True, width=5),
    ]
    rows = []
    for e in entries:
        what = ",".join(i[:8] for i in e.ids[:3]) + ("…" if e.count > 3 else "")
        details = " ".join(f"{k}={v}" for k, v in e.details.items())
        rows.append(
            (
                moment(e.at),
                e.action,
                e.by,
                e.how or "-",
                str(e.count),
                " ".join(filter(None, (what, details))),
            )
        )
    return "\n".join(table(columns, "what", rows, width=width))


def dead_letters_table(letters: Sequence[DeadLetter], *, width: int | None = None) -> str:
    """Dead letters, oldest first: their id, when they failed (UTC), deliveries, the error,
    and the write's text (``-`` when it could not be decoded)."""
    if not letters:
        return "no dead letter"
    columns = [
        Column("id"),
        Column("failed (UTC)"),
        Column("tries", right=True),
        Column("error", cap=40, least=12),
    ]
    rows = [
        (d.id, moment(d.failed_at), str(d.deliveries), d.error, d.content or "-") for d in letters
    ]
    lines = table(columns, "write", rows, width=width)
    lines += ["", *_said("retry: hindsight-redis dlq replay [<id> ...] (none: all)", width)]
    return "\n".join(lines)


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


def start_line(what: str, *, namespaces: str, redis: str, profile: str | None, then: str) -> str:
    """What a long-running command says once, as it starts: what it is and serves, which
    namespace(s), which Redis (its URL without a password) and persistence profile, and how
    it stops."""
    on = f"Redis {redis}" + (f" (profile {profile})" if profile else "")
    return f"{what}: {namespaces}; {on}; {then}"
