"""The console's pages as HTML: pure functions of the data they show (no I/O).

Server-rendered, plain forms, no script: every page works in any browser
and in tests that read the HTML. Every value shown goes through ``esc``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from hindsight_redis.core.models import MemoryRecord, SearchHit, explain_reason
from hindsight_redis.lifecycle.review import ConflictResolution, resolution_summary
from hindsight_redis.ops.admin import DeadLetter
from hindsight_redis.ops.render import age, health_rows, moment, snippet
from hindsight_redis.ops.stats import QueueState
from hindsight_redis.trust.audit import ACTIONS, AuditEntry

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:10px 20px;display:flex;gap:18px;align-items:center}
header a{color:#cfe3ff;text-decoration:none}header b{font-size:16px;margin-right:12px}
main{padding:16px 20px}table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #e3e6ea;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.card{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 12px;flex:1}
.pair{display:flex;gap:12px;margin:12px 0;align-items:stretch}.muted{color:#6b7480}
.badge{display:inline-block;padding:0 6px;border-radius:8px;background:#ffe3c4;font-size:12px}
.ok{background:#d8f3dc}.warn{background:#ffd6d6}form.inline{display:inline}
button{cursor:pointer;padding:3px 10px}input,select{padding:3px 5px}
.notice{background:#fff6d6;border:1px solid #f0dc8c;padding:6px 10px;margin-bottom:12px}
"""


def esc(value: object) -> str:
    """``value`` as HTML text."""
    return html.escape("" if value is None else str(value), quote=True)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def layout(title: str, body: str, *, namespace: str | None = None, admin: bool = False) -> str:
    """A whole page: the header (with the namespace's links) around ``body``."""
    links = ['<a href="/">namespaces</a>']
    if namespace is not None:
        base = f"/ns/{quote(namespace, safe='')}"
        for path, name in (
            ("", "overview"),
            ("/memories", "memories"),
            ("/drops", "drops"),
            ("/conflicts", "conflicts"),
            ("/review", "review"),
            ("/dlq", "dead letters"),
            ("/audit", "audit"),
        ):
            links.append(f'<a href="{base}{path}">{name}</a>')
    mode = "admin" if admin else "read-only"
    where = f" · {esc(namespace)}" if namespace is not None else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)} · hindsight"
        f"</title><style>{_STYLE}</style></head><body><header><b>hindsight-redis{where}</b>"
        f"{''.join(links)}<span class='muted' style='margin-left:auto'>{mode}</span></header>"
        f"<main><h2>{esc(title)}</h2>{body}</main></body></html>"
    )


def ns_url(namespace: str, path: str = "", **query: Any) -> str:
    """The URL of a namespace's page."""
    found = {k: v for k, v in query.items() if v not in (None, "", False)}
    return f"/ns/{quote(namespace, safe='')}{path}" + (f"?{urlencode(found)}" if found else "")


def _form(action: str, fields: Mapping[str, str], label: str, csrf: str, extra: str = "") -> str:
    hidden = "".join(
        f"<input type='hidden' name='{esc(k)}' value='{esc(v)}'>"
        for k, v in {**fields, "csrf": csrf}.items()
    )
    return (
        f"<form class='inline' method='post' action='{esc(action)}'>{hidden}{extra}"
        f"<button type='submit'>{esc(label)}</button></form>"
    )


# -- pages ----------------------------------------------------------------------


def overview_page(states: Sequence[QueueState], now: float, *, admin: bool) -> str:
    """Every namespace with its counters and lag."""
    rows = []
    for s in states:
        memories = s.memories or {}
        lag = s.lag_s(now)
        lag_cell = f"<span class='badge {'warn' if lag > 30 else 'ok'}'>{lag:.1f} s</span>"
        rows.append(
            f"<tr><td><a href='{ns_url(s.namespace)}'>{esc(s.namespace)}</a></td>"
            f"<td class='n'>{s.accepted:,}</td><td class='n'>{s.counters.get('indexed', 0):,}</td>"
            f"<td class='n'>{sum(s.dropped.values()):,}</td><td class='n'>{s.backlog:,}</td>"
            f"<td class='n'>{lag_cell}</td><td class='n'>{s.dead_letters:,}</td>"
            f"<td class='n'>{memories.get('active', 0):,}</td>"
            f"<td class='n'>{memories.get('archived', 0):,}</td></tr>"
        )
    head = "".join(
        f"<th class='n'>{h}</th>"
        for h in (
            "accepted",
            "indexed",
            "dropped",
            "backlog",
            "lag",
            "dead letters",
            "active",
            "archived",
        )
    )
    body = f"<table><tr><th>namespace</th>{head}</tr>{''.join(rows)}</table>"
    if not states:
        body = "<p>No namespace yet: write a memory first.</p>"
    return layout("Namespaces", body, admin=admin)


def namespace_page(
    state: QueueState,
    chart: str,
    now: float,
    *,
    admin: bool,
    llm_spend: str = "",
    health: Mapping[str, Any] | None = None,
) -> str:
    """One namespace: counters, drops per reason, workers' lag, the chart, the LLM's
    spend today against the budget (``llm_spend``, ``render.spend_text``) and the memory's
    health (``health.health_of``, as ``render.health_rows`` words it)."""
    counters = state.counters
    items = [
        ("accepted", state.accepted),
        ("processed", counters.get("processed", 0)),
        ("indexed", counters.get("indexed", 0)),
        ("merged", counters.get("merged", 0)),
        ("dropped", sum(state.dropped.values())),
        ("held for review", counters.get("held", 0)),
        ("backlog", state.backlog),
        ("pending", state.pending),
        ("dead letters", state.dead_letters),
        ("conflicts flagged", counters.get("conflicts", 0)),
    ]
    cells = "".join(f"<tr><th>{k}</th><td class='n'>{v:,}</td></tr>" for k, v in items)
    cells += f"<tr><th>index lag</th><td class='n'>{state.lag_s(now):.1f} s</td></tr>"
    if llm_spend:
        cells += f"<tr><th>LLM today</th><td>{esc(llm_spend)}</td></tr>"
    cells += "".join(
        f"<tr><th>{esc(name)}</th><td>{esc(value)}</td></tr>" for name, value in health_rows(health)
    )
    drops = "".join(
        f"<tr><td>{esc(reason)}</td><td class='n'>{n:,}</td><td>{esc(explain_reason(reason))}"
        f"</td></tr>"
        for reason, n in sorted(state.dropped.items(), key=lambda kv: -kv[1])
    )
    body = (
        f"<div class='pair'><div class='card'><h3>Counters</h3><table>{cells}</table></div>"
        f"<div class='card'><h3>Accepted, indexed, dropped over time</h3>{chart}</div></div>"
        f"<h3>Dropped, per reason</h3><table><tr><th>reason</th><th class='n'>writes</th>"
        f"<th>meaning</th></tr>{drops or '<tr><td colspan=3>none</td></tr>'}</table>"
    )
    return layout("Overview", body, namespace=state.namespace, admin=admin)


def search_form(namespace: str, args: Mapping[str, str]) -> str:
    """The memory browser's form: a query, its mode and the filters."""
    modes = "".join(
        f"<option{' selected' if args.get('mode', 'hybrid') == m else ''}>{m}</option>"
        for m in ("hybrid", "vector", "keyword")
    )
    fields = "".join(
        f" <input name='{name}' placeholder='{name}' value='{esc(args.get(name, ''))}' size=10>"
        for name in ("agent_id", "session_id", "task_type", "tag")
    )
    archived = " checked" if args.get("include_archived") else ""
    return (
        f"<form method='get' action='{ns_url(namespace, '/memories')}'>"
        f"<input name='q' placeholder='search (empty: the newest)' size=40 "
        f"value='{esc(args.get('q', ''))}'> <select name='mode'>{modes}</select>{fields} "
        f"<label><input type='checkbox' name='include_archived' value='1'{archived}> archived"
        f"</label> <button type='submit'>search</button></form><br>"
    )


def hits_table(namespace: str, hits: Sequence[SearchHit], now: float) -> str:
    """Search hits with every score that ranked them."""
    if not hits:
        return "<p>No memory matches.</p>"
    rows = "".join(
        f"<tr><td class='n'>{n}</td><td class='n'><b>{h.fused:.2f}</b></td>"
        f"<td class='n'>{_score(h.vector)}</td><td class='n'>{_score(h.keyword)}</td>"
        f"<td class='n'>{_score(h.bm25)}</td><td class='n'>{_score(h.contextual)}</td>"
        f"<td>{esc(h.agent_id or '-')}</td><td>{age(h.created_at, now)}</td>"
        f"<td><a href='{ns_url(namespace, '/memories/' + h.id)}'>{esc(snippet(h.content, 160))}"
        f"</a>{' <span class=badge>conflict</span>' if h.conflicts_with else ''}</td></tr>"
        for n, h in enumerate(hits, start=1)
    )
    head = "".join(
        f"<th class='n'>{h}</th>" for h in ("#", "fused", "vector", "keyword", "bm25", "contextual")
    )
    head += "<th>agent</th><th>age</th><th>memory</th>"
    return f"<table class='hits'><tr>{head}</tr>{rows}</table>"


def records_table(namespace: str, records: Sequence[MemoryRecord], now: float) -> str:
    """Stored memories, newest first."""
    if not records:
        return "<p>No memory stored yet.</p>"
    rows = "".join(
        f"<tr><td><a href='{ns_url(namespace, '/memories/' + r.id)}'>{esc(r.id[:12])}</a></td>"
        f"<td>{esc(r.status)}</td><td>{esc(r.visibility)}</td><td>{esc(r.agent_id or '-')}</td>"
        f"<td>{esc(r.task_type)}</td><td>{esc(', '.join(r.tags))}</td><td>{age(r.created_at, now)}"
        f"</td><td class='content'>{esc(snippet(r.content, 160))}"
        f"{' <span class=badge>conflict</span>' if r.conflicts_with else ''}</td></tr>"
        for r in records
    )
    return (
        "<table class='memories'><tr><th>id</th><th>status</th><th>visibility</th><th>agent</th>"
        f"<th>task</th><th>tags</th><th>age</th><th>memory</th></tr>{rows}</table>"
    )


def memory_page(record: MemoryRecord, *, admin: bool, csrf: str) -> str:
    """Every field of one memory; restore when archived (admin)."""
    rows = "".join(
        f"<tr><th>{esc(name)}</th><td>{esc(value)}</td></tr>"
        for name, value in (
            ("id", record.id),
            ("status", record.status),
            ("content", record.content),
            ("original", record.original),
            ("agent", record.agent_id),
            ("session", record.session_id),
            ("task type", record.task_type),
            ("sources", ", ".join(record.sources)),
            ("tags", ", ".join(record.tags)),
            ("visibility", record.visibility),
            ("protected", record.protected),
            ("write score", record.write_score),
            ("score reason", record.score_reason),
            ("reads", record.access_count),
            ("conflicts with", ", ".join(record.conflicts_with)),
            ("resolved with", ", ".join(record.resolved_with)),
            ("resolution", resolution_summary(record.resolution)),
            ("superseded by", record.superseded_by),
            ("archive reason", record.archive_reason),
            ("held because", record.hold_reason),
            ("provenance", record.provenance),
            ("reviewed", "yes" if record.reviewed else ""),
            ("embedding", f"{record.embedding_model} ({record.embedding_dims})"),
        )
        if value not in (None, "", ())
    )
    actions = ""
    if admin and record.status == "archived":
        actions = _form(
            ns_url(record.namespace, "/restore"), {"memory_id": record.id}, "Restore", csrf
        )
    elif admin and record.status == "held":
        actions = _review_buttons(record, csrf)
    return layout(
        "Memory", f"<table>{rows}</table><p>{actions}</p>", namespace=record.namespace, admin=admin
    )


def drops_page(
    namespace: str, drops: Sequence[Mapping[str, Any]], now: float, *, admin: bool
) -> str:
    """The latest writes the filters dropped, with their reasons in words."""
    rows = "".join(
        f"<tr><td>{age(float(d.get('created_at') or 0), now)}</td><td>{esc(d.get('reason'))}</td>"
        f"<td>{esc(explain_reason(str(d.get('reason', ''))))}</td>"
        f"<td>{esc(d.get('agent_id') or '-')}</td>"
        f"<td>{esc(snippet(str(d.get('content', '')), 140))}"
        f"</td></tr>"
        for d in drops
    )
    body = (
        "<table><tr><th>age</th><th>reason</th><th>meaning</th><th>agent</th><th>text</th></tr>"
        f"{rows or '<tr><td colspan=5>none</td></tr>'}</table>"
    )
    return layout("Recent drops", body, namespace=namespace, admin=admin)


def _card(record: MemoryRecord, side: str, now: float) -> str:
    return (
        f"<div class='card'><div class='muted'>{side} · {age(record.created_at, now)} ago · "
        f"{esc(record.agent_id or '-')} · "
        f"<a href='{ns_url(record.namespace, '/memories/' + record.id)}'>"
        f"{esc(record.id[:12])}</a></div><p class='content'>{esc(record.content)}</p></div>"
    )


def conflicts_page(
    namespace: str,
    pairs: Sequence[tuple[MemoryRecord, MemoryRecord]],
    log: Sequence[ConflictResolution],
    now: float,
    *,
    admin: bool,
    csrf: str,
    notice: str = "",
) -> str:
    """Each open conflict side by side (older | newer) with its resolve buttons, then the log."""
    parts = [f"<div class='notice'>{esc(notice)}</div>" if notice else ""]
    if not pairs:
        parts.append("<p>No open conflict.</p>")
    action = ns_url(namespace, "/conflicts/resolve")
    for older, newer in pairs:
        buttons = ""
        if admin:
            note = "<input name='note' placeholder='why (recorded)' size=24> "
            ids = {"memory_id": newer.id, "other_id": older.id}
            buttons = (
                "<div class='actions'>"
                + " ".join(
                    _form(action, {**ids, "keep": keep}, label, csrf, note if keep == "new" else "")
                    for keep, label in (
                        ("new", "Keep new"),
                        ("old", "Keep old"),
                        ("both", "Keep both"),
                    )
                )
                + "</div>"
            )
        parts.append(
            f"<div class='conflict'><div class='pair'>{_card(older, 'older', now)}"
            f"{_card(newer, 'newer', now)}</div>{buttons}</div>"
        )
    rows = []
    for entry in log:
        undo = ""
        if admin and entry.action == "resolve":
            target = entry.archived or entry.memory_id
            undo = _form(ns_url(namespace, "/restore"), {"memory_id": target}, "Undo", csrf)
        what = "undone" if entry.action == "undo" else f"kept {entry.keep}"
        rows.append(
            f"<tr><td>{age(entry.resolved_at, now)}</td><td>{esc(entry.resolved_by)}</td>"
            f"<td>{esc(what)}</td><td>{esc(entry.memory_id[:12])} / {esc(entry.other_id[:12])}"
            f"</td><td>{esc(entry.archived or '')}</td><td>{esc(entry.note)}</td>"
            f"<td>{undo}</td></tr>"
        )
    parts.append(
        "<h3>Resolutions</h3><table><tr><th>age</th><th>by</th><th>decision</th><th>pair</th>"
        f"<th>archived</th><th>note</th><th></th></tr>"
        f"{''.join(rows) or '<tr><td colspan=7>none yet</td></tr>'}</table>"
    )
    return layout("Conflicts", "".join(parts), namespace=namespace, admin=admin)


def dlq_page(
    namespace: str,
    letters: Sequence[DeadLetter],
    now: float,
    *,
    admin: bool,
    csrf: str,
    notice: str = "",
) -> str:
    """Dead letters with their errors, and replay buttons (admin)."""
    action = ns_url(namespace, "/dlq/replay")
    rows = "".join(
        f"<tr><td>{esc(d.id)}</td><td>{age(d.failed_at, now)}</td><td class='n'>{d.deliveries}</td>"
        f"<td>{esc(snippet(d.error, 120))}</td><td>{esc(snippet(d.content or '', 100))}</td>"
        f"<td>{_form(action, {'ids': d.id}, 'Replay', csrf) if admin else ''}</td></tr>"
        for d in letters
    )
    every = _form(action, {}, "Replay all", csrf) if admin and letters else ""
    body = (
        f"{f'<div class=notice>{esc(notice)}</div>' if notice else ''}<p>{every}</p><table><tr>"
        "<th>id</th><th>failed</th><th class='n'>tries</th><th>error</th><th>text</th><th></th>"
        f"</tr>{rows or '<tr><td colspan=6>none</td></tr>'}</table>"
    )
    return layout("Dead letters", body, namespace=namespace, admin=admin)


def _review_buttons(record: MemoryRecord, csrf: str) -> str:
    return " ".join(
        _form(ns_url(record.namespace, f"/review/{action}"), {"memory_id": record.id}, label, csrf)
        for action, label in (("approve", "Approve"), ("reject", "Reject"))
    )


def review_page(
    namespace: str,
    held: Sequence[MemoryRecord],
    rejected: Sequence[MemoryRecord],
    now: float,
    *,
    admin: bool,
    csrf: str,
    notice: str = "",
) -> str:
    """The writes held for review, each with why and its approve/reject buttons (admin),
    then the latest rejected ones."""
    parts = [f"<div class='notice'>{esc(notice)}</div>" if notice else ""]
    parts.append(
        "<p class='muted'>Held writes are not indexed: no search finds them and agents "
        "cannot read them. Approve one to store it (marked reviewed); reject it to keep it "
        "out, for the record.</p>"
    )
    rows = "".join(
        f"<tr class='held'><td><a href='{ns_url(namespace, '/memories/' + r.id)}'>"
        f"{esc(r.id[:12])}</a></td><td>{age(r.created_at, now)}</td>"
        f"<td>{esc(r.agent_id or '-')}</td><td>{esc(r.provenance or '-')}</td>"
        f"<td><span class='badge warn'>{esc(r.hold_reason or '')}</span></td>"
        f"<td class='content'>{esc(snippet(r.content, 300))}</td>"
        f"<td>{_review_buttons(r, csrf) if admin else ''}</td></tr>"
        for r in held
    )
    parts.append(
        "<table class='review'><tr><th>id</th><th>age</th><th>writer</th><th>provenance</th>"
        "<th>why</th><th>write</th><th></th></tr>"
        f"{rows or '<tr><td colspan=7>nothing held for review</td></tr>'}</table>"
    )
    gone = "".join(
        f"<tr><td>{esc(r.id[:12])}</td><td>{esc(r.agent_id or '-')}</td>"
        f"<td>{esc(r.hold_reason or '')}</td><td>{esc(r.reason or '')}</td>"
        f"<td>{esc(snippet(r.content, 120))}</td></tr>"
        for r in rejected
    )
    parts.append(
        "<h3>Rejected</h3><table><tr><th>id</th><th>writer</th><th>why held</th>"
        f"<th>decision</th><th>write</th></tr>{gone or '<tr><td colspan=5>none</td></tr>'}"
        "</table>"
    )
    return layout("Review", "".join(parts), namespace=namespace, admin=admin)


def audit_page(
    namespace: str,
    entries: Sequence[AuditEntry],
    args: Mapping[str, str],
    now: float,
    *,
    admin: bool,
) -> str:
    """The audit trail, newest first: who did what to which memories (ids, counts and
    digests: the trail holds no content), filtered by agent and action."""
    actions = "".join(
        f"<option{' selected' if args.get('action') == a else ''}>{a}</option>"
        for a in ("", *ACTIONS)
    )
    form = (
        f"<form method='get' action='{ns_url(namespace, '/audit')}'>"
        f"<input name='agent' placeholder='by agent' size=16 value='{esc(args.get('agent', ''))}'>"
        f" <select name='action'>{actions}</select> <button type='submit'>filter</button>"
        "</form><br>"
    )
    rows = "".join(
        f"<tr><td title='{esc(e.entry_id)}'>{esc(moment(e.at))}</td><td>{age(e.at, now)}</td>"
        f"<td><b>{esc(e.action)}</b></td><td>{esc(e.by)}</td><td>{esc(e.how or '-')}</td>"
        f"<td class='n'>{e.count:,}</td><td class='ids'>{esc(', '.join(i[:12] for i in e.ids))}"
        f"{'…' if e.count > len(e.ids) else ''}</td>"
        f"<td>{esc(' '.join(f'{k}={v}' for k, v in e.details.items()))}</td></tr>"
        for e in entries
    )
    body = (
        f"{form}<table class='audit'><tr><th>when (UTC)</th><th>age</th><th>action</th>"
        "<th>by</th><th>identified by</th><th class='n'>memories</th><th>ids</th>"
        f"<th>details</th></tr>{rows or '<tr><td colspan=8>no entry</td></tr>'}</table>"
    )
    return layout("Audit trail", body, namespace=namespace, admin=admin)
