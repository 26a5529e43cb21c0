"""Plain data: the stream payload, records, receipts, hits and filters.

Pure module: no I/O, no Redis. Validation of what agents send lives here so
that the client, the MCP server and the CLI reject bad input the same way.
"""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hindsight_redis.core.context import MAX_CONTEXT_CHARS, kept_context
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import InvalidMemory, shown

EVENT_VERSION = 1
MemoryStatus = Literal["active", "archived", "dropped", "merged"]
SearchMode = Literal["hybrid", "vector", "keyword"]
WRITE_FIELDS = (
    "content",
    "context",
    "agent_id",
    "session_id",
    "task_type",
    "source",
    "tags",
    "protected",
    "visibility",
    "importance",
    "half_life_days",
    "occurred_at",
    "idempotency_key",
    "wait",
    "timeout_s",
)
"""The arguments of ``write()``, and the keys a ``write_many()`` item may have."""
_WRITE_FIELD_SET = frozenset(WRITE_FIELDS)
Visibility = Literal["shared", "private"]
_MAX_ID_CHARS = 256
MAX_HALF_LIFE_DAYS = 36_500
"""The longest half-life a memory may carry (a century)."""
OCCURRED_RANGE_S = (-62_135_596_800.0, 253_402_300_799.0)
"""The ``occurred_at`` a write may give (unix seconds): from year 1 to the end of year 9999."""
_MAX_TAG_CHARS = 128
_TAG_SEPARATOR = "|"  # documents.TAG_SEPARATOR: how a memory's tags are stored, joined


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
    """Text the contextual vector is embedded with, after the content (``neighbours``)."""


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


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Metadata filters of a search; ``None`` means no constraint.

    ``viewer`` is who searches: it sees the shared memories and its own
    private ones. ``agent_id`` keeps only memories written by that agent.
    ``since``/``until`` bound ``created_at``; ``occurred_since``/``occurred_until``
    bound ``occurred_at`` (memories without one do not match them).
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


def _text(name: str, value: object, limit: int = _MAX_ID_CHARS, *, controls: bool = True) -> str:
    """A text field of a write; ``controls=False`` for filter values (identifiers, tags)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidMemory(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidMemory(f"{name} is {len(value)} characters, limit is {limit}")
    problem = text_problem(value, controls=controls)
    if problem is not None:
        raise InvalidMemory(f"{name} {problem}")
    return value


def _tags(value: object, max_tags: int) -> tuple[str, ...]:
    if value is None or value == ():
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidMemory("tags must be a list of strings")
    if len(value) > max_tags:
        raise InvalidMemory(f"{len(value)} tags given, limit is {max_tags}")
    tags = []
    for tag in value:
        text = _text("tag", tag, _MAX_TAG_CHARS, controls=False).strip()
        if not text:
            raise InvalidMemory("tags must not be empty strings")
        if _TAG_SEPARATOR in text:
            raise InvalidMemory(f"tag {text!r} holds {_TAG_SEPARATOR!r}, which separates tags")
        tags.append(text)
    return tuple(dict.fromkeys(tags))


def event_id_for(namespace: str, idempotency_key: str | None) -> str:
    """A new memory id, or a stable one derived from the idempotency key."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    digest = hashlib.sha256(f"{namespace}\x00{idempotency_key}".encode()).hexdigest()
    return digest[:32]


def build_event(
    namespace: str,
    fields: Mapping[str, Any],
    *,
    max_content_chars: int,
    max_tags: int,
    now: float | None = None,
) -> MemoryEvent:
    """Validate the keyword arguments of a write and build its stream event."""
    unknown = fields.keys() - _WRITE_FIELD_SET
    if unknown:
        raise InvalidMemory(f"unknown field(s): {', '.join(sorted(unknown))}")
    content = fields.get("content")
    if not isinstance(content, str):
        raise InvalidMemory("content must be a string")
    if not content.strip():
        raise InvalidMemory("content must not be empty")
    if len(content) > max_content_chars:
        raise InvalidMemory(f"content is {len(content)} characters, limit is {max_content_chars}")
    problem = text_problem(content)
    if problem is not None:
        raise InvalidMemory(f"content {problem}")
    importance = fields.get("importance")
    if importance is not None:
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise InvalidMemory("importance must be a number between 0 and 1")
        importance = finite_number(importance)
        if importance is None or not 0.0 <= importance <= 1.0:
            raise InvalidMemory("importance must be between 0 and 1")
    half_life = fields.get("half_life_days")
    if half_life is not None:
        if isinstance(half_life, bool) or not isinstance(half_life, int | float):
            raise InvalidMemory("half_life_days must be a number of days")
        half_life = finite_number(half_life)
        if half_life is None or not 0 < half_life <= MAX_HALF_LIFE_DAYS:
            raise InvalidMemory(f"half_life_days must be > 0 and at most {MAX_HALF_LIFE_DAYS}")
    occurred = occurred_at(fields.get("occurred_at"))
    protected = fields.get("protected", False)
    if not isinstance(protected, bool):
        raise InvalidMemory("protected must be true or false")
    key = fields.get("idempotency_key")
    if key is not None:
        key = _text("idempotency_key", key)
        if not key:
            raise InvalidMemory("idempotency_key must not be empty")
    visibility = _text("visibility", fields.get("visibility")) or "shared"
    if visibility not in ("shared", "private"):
        raise InvalidMemory('visibility must be "shared" or "private"')
    if visibility == "private" and not fields.get("agent_id"):
        raise InvalidMemory(
            "a private memory needs an owner: pass agent_id or as_agent, or set HINDSIGHT_AGENT_ID"
        )
    wait = fields.get("wait", False)
    if not isinstance(wait, bool):
        raise InvalidMemory("wait must be true or false")
    if fields.get("timeout_s") is not None:
        wait_timeout_s(fields, 0.0)  # validated with the rest, used by the client
    return MemoryEvent(
        event_id=event_id_for(namespace, key),
        namespace=namespace,
        content=content,
        context=write_context(fields.get("context")),
        agent_id=_text("agent_id", fields.get("agent_id"), controls=False),
        session_id=_text("session_id", fields.get("session_id"), controls=False),
        task_type=_text("task_type", fields.get("task_type"), controls=False),
        source=_text("source", fields.get("source"), 1024),
        tags=_tags(fields.get("tags"), max_tags),
        protected=protected,
        importance=importance,
        visibility=visibility,
        created_at=time.time() if now is None else now,
        notify=wait,
        half_life_days=half_life,
        occurred_at=occurred,
    )


def occurred_at(value: object) -> float | None:
    """A write's ``occurred_at``, validated: None, or unix seconds in ``OCCURRED_RANGE_S``."""
    if value is None:
        return None
    seconds = finite_number(value)
    if seconds is None:
        raise InvalidMemory(
            f"occurred_at must be a finite number (unix seconds), got {shown(value)}"
        )
    low, high = OCCURRED_RANGE_S
    if not low <= seconds <= high:
        hint = " (milliseconds? give seconds)" if seconds > high else ""
        raise InvalidMemory(
            f"occurred_at must be unix seconds between years 1 and 9999, got {shown(value)}{hint}"
        )
    return seconds


def write_context(value: object) -> str | None:
    """A write's ``context``, validated as content is and kept (``neighbours.kept_context``);
    None when absent or blank."""
    text = _text("context", value, MAX_CONTEXT_CHARS)
    return kept_context(text) or None


def wait_timeout_s(fields: Mapping[str, Any], default_s: float) -> float:
    """How long a ``wait=True`` write waits: ``timeout_s`` (seconds, >= 0) or ``default_s``.

    ``0`` means one look at the outcome, not the default.
    """
    value = fields.get("timeout_s")
    if value is None:
        return default_s
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidMemory(f"timeout_s must be a number of seconds, got {shown(value)}")
    seconds = finite_number(value)
    if seconds is None or seconds < 0:
        raise InvalidMemory(f"timeout_s must be a finite number >= 0, got {shown(value)}")
    return seconds


def finite_number(value: object) -> float | None:
    """``value`` as a float when it is a finite real number (not a bool), else None.

    An int too large for a float is not finite (``math.isfinite`` would raise).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


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
