"""Plain data: the stream payload, records, receipts, hits and filters.

Pure module: no I/O, no Redis. What callers may send, and its validation, is
``core.requests``'s (with ``core.checks``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

EVENT_VERSION = 1
MemoryStatus = Literal["active", "archived", "dropped", "merged", "held", "rejected"]
SearchMode = Literal["hybrid", "vector", "keyword"]
Visibility = Literal["shared", "private"]


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """What a write puts on the stream (msgpack-encoded, versioned)."""

    event_id: str
    namespace: str
    content: str
    agent_id: str = ""
    session_id: str = ""
    task_type: str = ""
    source: str = ""
    tags: tuple[str, ...] = ()
    protected: bool = False
    importance: float | None = None
    visibility: str = "shared"
    created_at: float = 0.0
    notify: bool = False
    version: int = EVENT_VERSION
    half_life_days: float | None = None
    occurred_at: float | None = None
    """When the event the memory tells of happened (unix seconds), if the writer knows."""
    context: str | None = None
    """Text the contextual vector is embedded with, after the content (``core.context``)."""
    provenance: str = ""
    """How the writer was identified: ``token``, ``settings`` or ``argument`` ("": unknown)."""
    hold: str | None = None
    """Why the write must be held for review before it is indexed (the write edge's
    verdict, e.g. ``secret:aws-key``); None: the workers decide."""
    reviewed: bool = False
    """A person approved the write after it was held (``approve``): no check holds it again,
    and its memory is marked ``reviewed``."""


@dataclass(frozen=True, slots=True)
class WriteReceipt:
    """Returned by ``write()``: the memory id and what happened to it so far.

    ``status`` is ``accepted`` (queued) or, with ``wait=True``, the final
    outcome: ``indexed``, ``merged`` (into ``merged_into``), ``dropped`` (with
    ``reason``) or ``dead_letter`` (with ``reason``). An idempotent retry gets
    the first write's id and stream id back, with ``duplicate=True``.
    """

    id: str
    status: str = "accepted"
    stream_id: str = ""
    reason: str | None = None
    merged_into: str | None = None
    duplicate: bool = False
    conflicts_with: tuple[str, ...] = ()
    scored_by: str | None = None
    """Who scored it (with ``wait=True``): ``llm``, ``heuristic``, ``heuristic (budget)``..."""


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A stored memory as ``get()`` returns it.

    ``half_life_days`` is the memory's own half-life (None: its task type's or
    the default); ``archived_at``/``archive_reason`` say when and why it was
    archived (by ``forget`` or a sweep).
    """

    id: str
    namespace: str
    content: str
    status: MemoryStatus
    agent_id: str = ""
    session_id: str = ""
    task_type: str = ""
    source: str = ""
    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    original: str | None = None
    write_score: float | None = None
    score_reason: str | None = None
    access_count: int = 0
    created_at: float = 0.0
    last_accessed_at: float = 0.0
    protected: bool = False
    visibility: str = "shared"
    embedding_model: str = ""
    embedding_dims: int = 0
    reason: str | None = None
    conflicts_with: tuple[str, ...] = ()
    merged_into: str | None = None
    half_life_days: float | None = None
    archived_at: float | None = None
    archive_reason: str | None = None
    superseded_by: str | None = None
    """The memory kept in this one's place when a conflict review archived it."""
    resolved_with: tuple[str, ...] = ()
    """Memories this one's conflicts were resolved with (``conflicts_with`` holds the open ones)."""
    resolution: Mapping[str, Any] | None = None
    """The last conflict resolution involving it: ``keep``, ``other``, ``kept``, ``archived``,
    ``by``, ``at``, ``note``."""
    occurred_at: float | None = None
    """When what it tells of happened (unix seconds), as the writer gave it; None: not known."""
    context: str | None = None
    """The context its contextual vector was embedded with (what was kept of the write's)."""
    hold_reason: str | None = None
    """Why a held (or rejected) write was held for review."""
    provenance: str = ""
    """How its writer was identified: ``token``, ``settings`` or ``argument`` ("": unknown)."""
    reviewed: bool = False
    """Whether a person approved it (``approve``) before it was indexed."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result, with the scores that ranked it.

    ``fused`` is the score of the search's mode (0..1); ``vector`` and
    ``contextual`` are cosines, ``keyword`` is BM25 scaled to 0..1 over the
    candidates, ``bm25`` the raw BM25 score. A leg that did not find the
    memory leaves its score None. ``conflicts_with``: an open contradiction.
    """

    id: str
    content: str
    source: str
    agent_id: str
    session_id: str
    task_type: str
    tags: tuple[str, ...]
    created_at: float
    vector: float | None = None
    keyword: float | None = None
    fused: float = 0.0
    status: MemoryStatus = "active"
    contextual: float | None = None
    bm25: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    conflicts_with: tuple[str, ...] = ()
    """Memories flagged as contradicting this one, not resolved yet (``conflicts resolve``)."""
    occurred_at: float | None = None
    """When what it tells of happened (unix seconds), as the writer gave it; None: not known."""
    provenance: str = ""
    """How its writer was identified: ``token``, ``settings`` or ``argument`` ("": unknown)."""
    reviewed: bool = False
    """Whether a person approved it (``approve``) before it was indexed."""


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Metadata filters of a search; ``None`` means no constraint.

    ``viewer`` is who searches: it sees the shared memories and its own
    private ones. ``agent_id`` keeps only memories written by that agent.
    ``since``/``until`` bound ``created_at``; ``occurred_since``/``occurred_until``
    bound ``occurred_at`` (memories without one do not match them). ``trusted_only``
    keeps memories of identified writers and reviewed ones.
    """

    agent_id: str | None = None
    session_id: str | None = None
    task_type: str | None = None
    tags: tuple[str, ...] | None = None
    since: float | None = None
    until: float | None = None
    include_archived: bool = False
    viewer: str = ""
    occurred_since: float | None = None
    occurred_until: float | None = None
    trusted_only: bool = False
    """Only memories of identified writers (``core.fields.TRUSTED_PROVENANCE``) or
    reviewed ones."""


PARTITION_TAG = "partition:"
"""A tag ``partition:<name>`` keeps a memory apart: it is merged with, and flagged as
contradicting, only memories of the same partition (those without one form theirs)."""


def partition_of(tags: Sequence[str]) -> str:
    """The partition a memory's tags name ("" for none)."""
    return next((t for t in tags if t.startswith(PARTITION_TAG)), "")


REASONS = {
    "rule:ack": "an acknowledgement, nothing to remember",
    "rule:too_short": "too short to be useful",
    "rule:emoji_only": "only emoji",
    "rule:punctuation_only": "only punctuation",
    "rule:duplicate": "the same text was just written",
    "score:low": "scored unlikely to be useful again",
    "dead_letter": "failed too often to be processed (see `hindsight-redis dlq list`)",
}
"""What each drop reason means, in words."""


def explain_reason(reason: str) -> str:
    """A drop reason in words: ``"rule:ack (ok thanks)"`` -> ``"an acknowledgement, ..."``.

    The code's detail (after the code) is kept; unknown codes are returned as they are.
    """
    code, _, detail = reason.partition(" ")
    words = REASONS.get(code)
    if words is None:
        return reason
    return f"{words} {detail}".strip() if detail else words
