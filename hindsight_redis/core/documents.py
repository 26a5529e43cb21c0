"""The memory hash: its fields, and conversions to and from it.

Pure module: no I/O. A memory lives in one hash (``Keys.doc``) that the
search index covers. The worker's commit writes it (``memory_document``),
``get()`` reads it back as a ``MemoryRecord`` (``record_from_fields``),
searches read a few fields of it as a ``SearchHit`` (``hit_from_fields``).
What became of a write that was not stored (merged, dropped) is its
outcome, read by ``record_from_outcome``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hindsight_redis.core.fields import DEFAULT_LANGUAGE, REFINE_CHINESE
from hindsight_redis.core.models import MemoryEvent, MemoryRecord, SearchHit, partition_of
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.text import has_han
from hindsight_redis.core.vectors import vector_bytes

TAG_SEPARATOR = "|"
RECORD_FIELDS = (
    "namespace",
    "content",
    "status",
    "agent_id",
    "session_id",
    "task_type",
    "source",
    "sources",
    "tags",
    "original",
    "write_score",
    "score_reason",
    "access_count",
    "created_at",
    "last_accessed_at",
    "protected",
    "visibility",
    "embedding_model",
    "embedding_dims",
    "conflicts_with",
    "half_life_days",
    "archived_at",
    "archive_reason",
    "superseded_by",
    "resolved_with",
    "resolution",
    "occurred_at",
    "context",
    "provenance",
    "reviewed",
)
"""The fields ``get()`` reads (every stored field but the vectors)."""
HIT_FIELDS = (
    "content",
    "source",
    "agent_id",
    "session_id",
    "task_type",
    "tags",
    "created_at",
    "status",
    "conflicts_with",
    "occurred_at",
    "provenance",
    "reviewed",
)
"""The fields a search hit carries."""
SCOPE_FIELDS = ("status", "visibility", "agent_id", "namespace", "script")
"""The fields a search leg returns: to post-filter its rows (``index.filters.visible``), and
the memory's script (cross-language ranking; RediSearch does not return ``lang``,
its language field): ``han``, or absent for Latin script."""
HIT_ONLY_FIELDS = tuple(f for f in HIT_FIELDS if f not in SCOPE_FIELDS)
"""What each search leg returns beside ``SCOPE_FIELDS``: the hit's fields, so the ranked
memories need no second read."""


def claim_digest(
    namespace: str, agent_id: str, visibility: str, tags: Sequence[str], content: str
) -> str:
    """The digest of a text's content claim (``Keys.content_claim``): exact twins collide.

    Scoped to the namespace (and to the agent for private memories, and to the
    partition: ``models.partition_of``); whitespace and case differences do not
    make a text new.
    """
    owner = agent_id if visibility == "private" else ""
    text = " ".join(content.split()).casefold()
    partition = partition_of(tags)
    scope = f"{namespace}\0{owner}" + (f"\0{partition}" if partition else "")
    return hashlib.sha256(f"{scope}\0{text}".encode()).hexdigest()


def join_tags(tags: Sequence[str]) -> str:
    """Tags as one TAG field value."""
    return TAG_SEPARATOR.join(t.replace(TAG_SEPARATOR, " ") for t in tags)


def split_tags(value: str) -> tuple[str, ...]:
    """The inverse of ``join_tags``."""
    return tuple(t for t in value.split(TAG_SEPARATOR) if t)


def with_merged_sources(stored: Any, pending: Any) -> str:
    """A memory's ``sources`` with those of the writes merged into it since the last fold
    of the merge log (``Keys.merge_log``), each once, in order."""
    both = (*split_tags(as_text(stored)), *split_tags(as_text(pending)))
    return join_tags(list(dict.fromkeys(both)))


def detect_language(text: str) -> str:
    """The RediSearch language of a text: ``chinese`` when it has Han characters.

    Cheap script check, not a language model: any Han character makes the
    document ``chinese`` so RediSearch segments it into words (English words
    and identifiers inside it are still indexed); everything else is
    ``english`` (stemmed).
    """
    return "chinese" if has_han(text) else "english"


def waiting_state(lang: str, *, contextual: bool) -> str:
    """The ``refine`` state of a memory in ``lang`` without its refined vector: Chinese
    ones wait for the multilingual model's (``REFINE_CHINESE``: the contextual model reads
    English only), the others for the contextual one (``pending``); ``off`` when the index
    has no contextual field (no refiner runs)."""
    if not contextual:
        return "off"
    return REFINE_CHINESE if lang == "chinese" else "pending"


def memory_document(
    event: MemoryEvent,
    *,
    content: str,
    vector_field: str,
    vector_datatype: str,
    embedding: np.ndarray | None = None,
    original: str | None = None,
    write_score: float | None = None,
    score_reason: str | None = None,
    conflicts_with: Sequence[str] = (),
    contextual: bool = True,
) -> dict[str, str | bytes]:
    """The fields of the memory hash the index covers, for a new memory.

    The memory's id is its ``event.event_id`` (the hash's key holds it);
    ``content`` is what is stored (a summary when ``original`` is given, kept
    only when it differs). The vector is stored as ``vector_datatype``, the
    index's. ``contextual``: the index has a contextual vector field, so the
    memory waits for a refiner (``refine``). Fields left empty are not stored:
    a missing field reads as empty everywhere, and an empty tag is not
    indexed anyway (each stored field costs its name and a few bytes). Nor
    are the defaults: ``access_count`` 0 (``HINCRBY`` starts from nothing),
    ``last_accessed_at`` (``created_at`` until a fold writes it), ``lang``
    english (the index's default language), ``script`` latin, ``protected``
    0, and the embedding model and dimensions (the index record names them).
    """
    lang = detect_language(content)
    doc: dict[str, str | bytes] = {
        "namespace": event.namespace,
        "content": content,
        "original": original if original and original != content else "",
        "context": event.context or "",  # not indexed: only the contextual vector reads it
        "agent_id": event.agent_id,
        "session_id": event.session_id,
        "task_type": event.task_type,
        "source": event.source,
        "sources": join_tags([event.source] if event.source else []),
        "tags": join_tags(event.tags),
        "visibility": event.visibility,
        "status": "active",
        "protected": "1" if event.protected else "",
        "score_reason": score_reason or "",
        "created_at": f"{event.created_at:.6f}",
        "conflicts_with": join_tags(conflicts_with),
        "lang": "" if lang == DEFAULT_LANGUAGE else lang,
        "script": "han" if lang == "chinese" else "",
        "review": "conflict" if conflicts_with else "",
        "half_life_days": "" if event.half_life_days is None else repr(event.half_life_days),
        "occurred_at": "" if event.occurred_at is None else f"{event.occurred_at:.6f}",
        "refine": waiting_state(lang, contextual=contextual),
        "reviewed": "1" if event.reviewed else "",  # approved after it was held (``trust``)
        "provenance": event.provenance,  # "reviewed" is set by a review (approve)
    }
    # Absent, not "", when unscored: an empty NUMERIC value fails indexing.
    if write_score is not None:
        doc["write_score"] = f"{write_score:.4f}"
    if embedding is not None:
        doc[vector_field] = vector_bytes(embedding, vector_datatype)
    return {name: value for name, value in doc.items() if value != ""}


def _float(doc: Mapping[str, Any], name: str, default: float = 0.0) -> float:
    value = as_text(doc.get(name))
    return float(value) if value else default


def record_from_fields(
    memory_id: str, doc: Mapping[str, Any], embedding: tuple[str, int] = ("", 0)
) -> MemoryRecord:
    """A ``MemoryRecord`` from the fields of a memory hash (vectors excluded).

    ``embedding``: the model and dimensions of the namespace's index, for a
    hash that does not name its own (only hashes written before they were
    left out, or imported, do).
    """
    text = {name: as_text(doc.get(name)) for name in RECORD_FIELDS}
    score = text["write_score"]
    return MemoryRecord(
        id=memory_id,
        namespace=text["namespace"],
        content=text["content"],
        status=text["status"] or "active",  # type: ignore[arg-type]
        agent_id=text["agent_id"],
        session_id=text["session_id"],
        task_type=text["task_type"],
        source=text["source"],
        sources=split_tags(text["sources"]),
        tags=split_tags(text["tags"]),
        original=text["original"] or None,
        write_score=float(score) if score else None,
        score_reason=text["score_reason"] or None,
        access_count=int(_float(doc, "access_count")),
        created_at=_float(doc, "created_at"),
        last_accessed_at=_float(doc, "last_accessed_at") or _float(doc, "created_at"),
        protected=text["protected"] == "1",
        visibility=text["visibility"] or "shared",
        embedding_model=text["embedding_model"] or embedding[0],
        embedding_dims=int(_float(doc, "embedding_dims")) or embedding[1],
        conflicts_with=split_tags(text["conflicts_with"]),
        half_life_days=float(text["half_life_days"]) if text["half_life_days"] else None,
        archived_at=float(text["archived_at"]) if text["archived_at"] else None,
        archive_reason=text["archive_reason"] or None,
        superseded_by=text["superseded_by"] or None,
        resolved_with=split_tags(text["resolved_with"]),
        resolution=_resolution(text["resolution"]),
        occurred_at=float(text["occurred_at"]) if text["occurred_at"] else None,
        context=text["context"] or None,
        provenance=text["provenance"],
        reviewed=text["reviewed"] == "1",
    )


def _resolution(raw: str) -> dict[str, Any] | None:
    """The last conflict resolution recorded on a memory (JSON), or None."""
    if not raw:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def record_from_outcome(
    memory_id: str, namespace: str, outcome: Mapping[str, Any]
) -> MemoryRecord | None:
    """What ``get()`` shows of a write that was merged or dropped; None otherwise."""
    status = outcome.get("status")
    if status not in ("merged", "dropped"):
        return None
    reason = str(outcome.get("reason", ""))
    detail = outcome.get("detail")
    return MemoryRecord(
        id=memory_id,
        namespace=namespace,
        content=str(outcome.get("content", "")),
        status=status,
        agent_id=str(outcome.get("agent_id", "")),
        session_id=str(outcome.get("session_id", "")),
        source=str(outcome.get("source", "")),
        created_at=float(outcome.get("created_at") or 0.0),
        merged_into=outcome.get("merged_into"),
        reason=(
            "near-duplicate of an existing memory"
            if status == "merged"
            else f"{reason} ({detail})"
            if detail
            else reason
        ),
    )


def hit_from_fields(
    memory_id: str,
    fields: Mapping[str, Any],
    *,
    fused: float,
    vector: float | None = None,
    keyword: float | None = None,
    contextual: float | None = None,
    bm25: float | None = None,
) -> SearchHit:
    """A ``SearchHit`` from the ``HIT_FIELDS`` of a memory hash and its scores."""
    created = as_text(fields.get("created_at"))
    occurred = as_text(fields.get("occurred_at"))
    return SearchHit(
        id=memory_id,
        content=as_text(fields.get("content")),
        source=as_text(fields.get("source")),
        agent_id=as_text(fields.get("agent_id")),
        session_id=as_text(fields.get("session_id")),
        task_type=as_text(fields.get("task_type")),
        tags=split_tags(as_text(fields.get("tags"))),
        created_at=float(created) if created else 0.0,
        vector=vector,
        keyword=keyword,
        fused=fused,
        contextual=contextual,
        bm25=bm25,
        status=as_text(fields.get("status")) or "active",  # type: ignore[arg-type]
        conflicts_with=split_tags(as_text(fields.get("conflicts_with"))),
        occurred_at=float(occurred) if occurred else None,
        provenance=as_text(fields.get("provenance")),
        reviewed=as_text(fields.get("reviewed")) == "1",
    )
