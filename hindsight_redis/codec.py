"""Pure conversions: events to stream fields, candidates to index documents.

No I/O. Stream entries carry one field, ``e``, holding the msgpack-encoded
event; anything that does not decode is a ``PoisonMessage``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import msgpack

from hindsight_redis.errors import PoisonMessage
from hindsight_redis.models import EVENT_VERSION, MemoryEvent, MemoryRecord
from hindsight_redis.pipeline.base import Candidate

EVENT_FIELD = b"e"
TAG_SEPARATOR = "|"
_EVENT_ORDER = tuple(MemoryEvent.__dataclass_fields__)
_EVENT_KEYS = frozenset(_EVENT_ORDER)


def encode_event(event: MemoryEvent) -> bytes:
    """msgpack bytes of an event, as stored in the stream field ``e``."""
    data = {name: getattr(event, name) for name in _EVENT_ORDER}
    data["tags"] = list(event.tags)
    packed: bytes = msgpack.packb(data, use_bin_type=True)
    return packed


def decode_event(fields: Mapping[bytes, bytes]) -> MemoryEvent:
    """The event of a stream entry; raises ``PoisonMessage`` when it cannot be read."""
    raw = fields.get(EVENT_FIELD)
    if raw is None:
        raise PoisonMessage("stream entry has no 'e' field")
    try:
        data = msgpack.unpackb(raw, raw=False)
    except (ValueError, msgpack.UnpackException) as e:
        raise PoisonMessage(f"stream entry is not valid msgpack: {e}") from e
    if not isinstance(data, dict):
        raise PoisonMessage("stream entry payload is not a map")
    version = data.get("version")
    if version != EVENT_VERSION:
        raise PoisonMessage(f"unsupported event version {version!r}")
    unknown = set(data) - _EVENT_KEYS
    if unknown:
        raise PoisonMessage(f"unknown event field(s): {sorted(unknown)}")
    try:
        data["tags"] = tuple(data.get("tags") or ())
        event = MemoryEvent(**data)
    except TypeError as e:
        raise PoisonMessage(f"malformed event: {e}") from e
    if not isinstance(event.content, str) or not isinstance(event.event_id, str):
        raise PoisonMessage("event content and id must be strings")
    return event


def as_text(value: Any) -> str:
    """A Redis reply value as ``str`` (replies may be bytes, str or None)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def join_tags(tags: tuple[str, ...] | list[str]) -> str:
    """Tags as one TAG field value."""
    return TAG_SEPARATOR.join(t.replace(TAG_SEPARATOR, " ") for t in tags)


def split_tags(value: str) -> tuple[str, ...]:
    """The inverse of ``join_tags``."""
    return tuple(t for t in value.split(TAG_SEPARATOR) if t)


def _str(doc: Mapping[str, Any], name: str) -> str:
    return as_text(doc.get(name))


def _float(doc: Mapping[str, Any], name: str, default: float = 0.0) -> float:
    value = _str(doc, name)
    return float(value) if value else default


def record_from_doc(memory_id: str, doc: Mapping[str, Any]) -> MemoryRecord:
    """A ``MemoryRecord`` from the fields of a memory hash (vector excluded)."""
    score = _str(doc, "write_score")
    original = _str(doc, "original")
    conflicts = _str(doc, "conflicts_with")
    status = _str(doc, "status") or "active"
    return MemoryRecord(
        id=memory_id,
        namespace=_str(doc, "namespace"),
        content=_str(doc, "content"),
        status=status,  # type: ignore[arg-type]
        agent_id=_str(doc, "agent_id"),
        session_id=_str(doc, "session_id"),
        task_type=_str(doc, "task_type"),
        source=_str(doc, "source"),
        sources=split_tags(_str(doc, "sources")),
        tags=split_tags(_str(doc, "tags")),
        original=original or None,
        write_score=float(score) if score else None,
        score_reason=_str(doc, "score_reason") or None,
        access_count=int(_float(doc, "access_count")),
        created_at=_float(doc, "created_at"),
        last_accessed_at=_float(doc, "last_accessed_at"),
        protected=_str(doc, "protected") == "1",
        visibility=_str(doc, "visibility") or "shared",
        embedding_model=_str(doc, "embedding_model"),
        embedding_dims=int(_float(doc, "embedding_dims")),
        conflicts_with=split_tags(conflicts),
    )


_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


def detect_language(text: str) -> str:
    """The RediSearch language of a text: ``chinese`` when it has Han characters.

    Cheap script check, not a language model: any Han character makes the
    document ``chinese`` so RediSearch segments it into words (English words
    and identifiers inside it are still indexed); everything else is
    ``english`` (stemmed).
    """
    return "chinese" if _HAN.search(text) else "english"


def encode_outcome(outcome: Mapping[str, Any]) -> str:
    """The JSON stored under an outcome key and pushed to waiting writers."""
    return json.dumps(outcome, separators=(",", ":"), ensure_ascii=False)


def decode_outcome(raw: bytes | str) -> dict[str, Any]:
    """The inverse of ``encode_outcome``."""
    value: dict[str, Any] = json.loads(raw)
    return value


def doc_from_candidate(
    candidate: Candidate,
    *,
    memory_id: str,
    vector_field: str,
    embedding_model: str,
    now: float,
) -> dict[str, str | bytes]:
    """The fields of the memory hash the index covers, for a new memory."""
    event = candidate.event
    doc: dict[str, str | bytes] = {
        "id": memory_id,
        "namespace": event.namespace,
        "content": candidate.content,
        "original": candidate.original or "",
        "agent_id": event.agent_id,
        "session_id": event.session_id,
        "task_type": event.task_type,
        "source": event.source,
        "sources": join_tags([event.source] if event.source else []),
        "tags": join_tags(list(event.tags)),
        "visibility": event.visibility,
        "status": "active",
        "protected": "1" if event.protected else "0",
        "score_reason": candidate.score_reason or "",
        "access_count": "0",
        "created_at": f"{event.created_at:.6f}",
        "last_accessed_at": f"{event.created_at:.6f}",
        "indexed_at": f"{now:.6f}",
        "conflicts_with": join_tags(candidate.conflicts_with),
        "embedding_model": embedding_model,
        "embedding_dims": "0",
        "event_id": event.event_id,
        "lang": detect_language(candidate.content),
        "review": "conflict" if candidate.conflicts_with else "",
    }
    # The contextual model reads English only: Chinese memories are not
    # refined, and search ranks them by the static vector and keywords.
    doc["refine"] = "off" if doc["lang"] == "chinese" else "pending"
    # Absent, not "", when unscored: an empty NUMERIC value fails indexing.
    if candidate.write_score is not None:
        doc["write_score"] = f"{candidate.write_score:.4f}"
    if candidate.embedding is not None:
        vector = candidate.embedding.astype("float32", copy=False)
        doc[vector_field] = vector.tobytes()
        doc["embedding_dims"] = str(vector.shape[-1])
    return doc
