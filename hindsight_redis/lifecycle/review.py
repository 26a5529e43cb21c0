"""Conflict review, the pure part: resolutions as data.

Pure module: no I/O. Two memories flagged as contradicting each other
(``conflicts_with``) stay until someone decides (``conflicts.py``): keep the
new one, keep the old one, or keep both. Until then a search that asks about
the present ranks the newer of the two first (the search's newer-first
re-ranker, ``search.rerank.newer_first``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

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
