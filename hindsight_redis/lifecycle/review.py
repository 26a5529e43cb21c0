"""Conflict review, the pure part: resolutions as data, and the newer-first rule of search.

Pure module: no I/O. Two memories flagged as contradicting each other
(``conflicts_with``) stay until someone decides (``conflicts.py``): keep the
new one, keep the old one, or keep both. Until then a search that asks about
the present ranks the newer of the two first (``prefer_newer``); a question
about the past ("what was...", "before", "以前": ``answer_type.asks_about_the_past``)
keeps the legs' order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.answer_type import asks_about_the_past

Keep = Literal["new", "old", "both"]
KEEP_CHOICES: tuple[Keep, ...] = get_args(Keep)
MAX_NOTE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class ConflictResolution:
    """One decision of a conflict review (or its undoing, ``action="undo"``).

    ``kept`` are the memories left active, ``archived`` the one archived
    (``superseded_by`` the kept one), None for ``keep="both"``. ``resolved_by``
    is who decided, ``resolved_at`` when (unix seconds), ``note`` why.
    """

    memory_id: str
    other_id: str
    keep: Keep | Literal[""]
    kept: tuple[str, ...]
    archived: str | None
    resolved_by: str
    resolved_at: float
    note: str = ""
    action: Literal["resolve", "undo"] = "resolve"
    log_id: str = ""


def resolution_from_fields(log_id: str, fields: Mapping[str, str]) -> ConflictResolution:
    """A ``ConflictResolution`` from an entry of the resolutions log (text fields)."""
    keep = fields.get("keep", "")
    action = fields.get("action", "resolve")
    chosen: Keep | Literal[""] = ""
    for choice in KEEP_CHOICES:
        if keep == choice:
            chosen = choice
    return ConflictResolution(
        memory_id=fields.get("memory", ""),
        other_id=fields.get("other", ""),
        keep=chosen,
        kept=tuple(k for k in fields.get("kept", "").split("|") if k),
        archived=fields.get("archived") or None,
        resolved_by=fields.get("by", ""),
        resolved_at=float(fields.get("at") or 0.0),
        note=fields.get("note", ""),
        action="undo" if action == "undo" else "resolve",
        log_id=log_id,
    )


# -- the newer-first rule ----------------------------------------------------------

COSINE_MARGIN = 0.05
"""How far below the older memory's cosine the newer one's may be and still rank first."""
BM25_SHARE = 0.9
"""The share of the older memory's BM25 the newer one needs to rank first."""


def _in_conflict(a: SearchHit, b: SearchHit) -> bool:
    return b.id in a.conflicts_with or a.id in b.conflicts_with


def comparable(newer: SearchHit, older: SearchHit) -> bool:
    """Whether ``newer`` answers the question about as well as ``older``, leg by leg.

    The raw scores, not ``fused`` (min-max scaling over a few candidates turns
    a cosine 0.003 lower into a whole weight lower): each cosine at most
    ``COSINE_MARGIN`` below, BM25 at least ``BM25_SHARE`` of the older's.
    """
    for new, old in ((newer.vector, older.vector), (newer.contextual, older.contextual)):
        if new is not None and old is not None and new < old - COSINE_MARGIN:
            return False
    return not older.bm25 or (newer.bm25 or 0.0) >= BM25_SHARE * older.bm25


def prefer_newer(hits: Sequence[SearchHit], query: str) -> list[SearchHit]:
    """``hits`` with the newer of each unresolved conflicting pair ranked above the older.

    Only when the newer is ``comparable`` (a query that names the old fact, or
    is its very text, keeps it first), and not for a question about the past.
    Only the order within the hits changes: the same memories come back, so
    recall at k is untouched.
    """
    ordered = list(hits)
    if len(ordered) < 2 or not any(h.conflicts_with for h in ordered):
        return ordered
    if asks_about_the_past(query):
        return ordered
    i = 0
    while i < len(ordered):
        hit = ordered[i]
        newer = [
            j
            for j in range(i + 1, len(ordered))
            if _in_conflict(hit, ordered[j])
            and ordered[j].created_at > hit.created_at
            and comparable(ordered[j], hit)
        ]
        if newer:  # the newest partner takes this place; it is checked in turn
            j = max(newer, key=lambda n: ordered[n].created_at)
            ordered.insert(i, ordered.pop(j))
            continue
        i += 1
    return ordered


def resolution_summary(resolution: Mapping[str, Any] | None) -> str:
    """A resolution recorded on a memory, in words ("kept new over 1a2b... by ops: why")."""
    if not resolution:
        return ""
    keep, other = resolution.get("keep", ""), str(resolution.get("other", ""))
    by, note = resolution.get("by", ""), resolution.get("note", "")
    text = (
        f"kept {keep} (with {other[:12]})" if keep != "both" else f"kept both (with {other[:12]})"
    )
    return f"{text} by {by}" + (f": {note}" if note else "")
