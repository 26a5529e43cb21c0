"""Filter expressions of the index: which memories a query may see.

Pure module: no I/O. Everything user-supplied that reaches RediSearch's
query syntax as a filter passes through here: tag values are escaped
character by character, so no operator (``-``, ``|``, ``@``, ``{``, ``*``,
``$``...) typed by a user can change a filter. ``visible`` checks the same
default filters on a row a search returned (searches post-filter them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hindsight_redis.core.fields import PROVENANCE_FIELD, REVIEWED_FIELD, TRUSTED_PROVENANCE
from hindsight_redis.core.models import SearchFilters
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import InvalidQuery


def escape_tag(value: str) -> str:
    """A tag value safe inside ``@field:{...}``: every non-word character escaped."""
    if not value:
        raise InvalidQuery("tag values must not be empty")
    return "".join(ch if ch.isalnum() or ch == "_" else "\\" + ch for ch in value)


def tag_clause(field: str, value: str) -> str:
    """``@field:{value}`` with the value escaped (exact match of one tag)."""
    return f"@{field}:{{{escape_tag(value)}}}"


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise InvalidQuery("time bounds must be finite numbers")
    return repr(float(value))


def refine_pending_filter(namespace: str, state: str = "pending") -> str:
    """Memories of ``namespace`` still waiting for their contextual vector (``state``
    ``"draft"``: those with a draft one, waiting for the exact one; ``"chinese"``: Chinese
    memories waiting for their multilingual vector)."""
    return f"{tag_clause('namespace', namespace)} {tag_clause('refine', state)}"


def build_filter(namespace: str, filters: SearchFilters) -> str:
    """The RediSearch filter expression (DIALECT 2) for a search.

    Always restricts to the namespace; to ``status`` active unless
    ``include_archived``; to shared memories and the ``viewer``'s own
    (private ones included). ``agent_id`` keeps those written by that agent;
    it never widens what the viewer sees. All given ``tags`` must be present.
    ``trusted_only`` keeps the memories of identified writers and reviewed ones.
    """
    parts = [tag_clause("namespace", namespace)]
    if not filters.include_archived:
        parts.append(tag_clause("status", "active"))
    if filters.viewer:
        shared = tag_clause("visibility", "shared")
        parts.append(f"({shared} | {tag_clause('agent_id', filters.viewer)})")
    else:
        parts.append(tag_clause("visibility", "shared"))
    if filters.agent_id:
        parts.append(tag_clause("agent_id", filters.agent_id))
    if filters.session_id:
        parts.append(tag_clause("session_id", filters.session_id))
    if filters.task_type:
        parts.append(tag_clause("task_type", filters.task_type))
    for tag in filters.tags or ():
        parts.append(tag_clause("tags", tag))
    if filters.trusted_only:
        parts.append(trusted_clause())
    if filters.since is not None or filters.until is not None:
        low = "-inf" if filters.since is None else _number(filters.since)
        high = "+inf" if filters.until is None else _number(filters.until)
        parts.append(f"@created_at:[{low} {high}]")
    if filters.occurred_since is not None or filters.occurred_until is not None:
        low = "-inf" if filters.occurred_since is None else _number(filters.occurred_since)
        high = "+inf" if filters.occurred_until is None else _number(filters.occurred_until)
        parts.append(f"@occurred_at:[{low} {high}]")
    return " ".join(parts)


def trusted_clause() -> str:
    """Memories of identified writers (``TRUSTED_PROVENANCE``) or reviewed ones."""
    trusted = [tag_clause(PROVENANCE_FIELD, how) for how in TRUSTED_PROVENANCE]
    return f"({' | '.join([*trusted, tag_clause(REVIEWED_FIELD, '1')])})"


def visible(fields: Mapping[str, Any], namespace: str, filters: SearchFilters) -> bool:
    """The default filters of ``build_filter``, checked on a row's ``SCOPE_FIELDS``.

    Searches post-filter these (they match nearly every memory, and as a
    pre-filter they cost more than they save).
    """
    if as_text(fields.get("namespace")) != namespace:
        return False
    if not filters.include_archived and as_text(fields.get("status")) != "active":
        return False
    return readable_by(fields, filters.viewer)


def readable_by(fields: Mapping[str, Any], viewer: str) -> bool:
    """Whether ``viewer`` may see a memory: shared, or its own (``visibility``, ``agent_id``)."""
    if as_text(fields.get("visibility")) in ("shared", ""):
        return True
    return bool(viewer) and as_text(fields.get("agent_id")) == viewer
