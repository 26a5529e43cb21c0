"""Checks of what callers send: each field of a write or a search, validated once.

Pure module: no I/O. The request models (``core.requests``) call these, so
the client, the MCP tools, the LangChain tools and the CLI reject bad input
the same way: an ``InvalidMemory`` (a write) or ``InvalidQuery`` (a search),
each a ``ValueError``, whose message names the field and what is wrong.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Sequence

from hindsight_redis.core.context import MAX_CONTEXT_CHARS, kept_context
from hindsight_redis.core.models import SearchFilters
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import InvalidMemory, InvalidQuery, shown

MAX_ID_CHARS = 256
"""The longest identifier a write may carry (agent, session, task type, idempotency key)."""
MAX_SOURCE_CHARS = 1024
MAX_TAG_CHARS = 128
MAX_HALF_LIFE_DAYS = 36_500
"""The longest half-life a memory may carry (a century)."""
OCCURRED_RANGE_S = (-62_135_596_800.0, 253_402_300_799.0)
"""The ``occurred_at`` a write may give (unix seconds): from year 1 to the end of year 9999."""
TAG_SEPARATOR = "|"  # documents.TAG_SEPARATOR: how a memory's tags are stored, joined
MODES = ("hybrid", "vector", "keyword")
MAX_QUERY_CHARS = 8_000
MAX_TOP_K = 100
MAX_FILTER_TAGS = 64
MAX_FILTER_CHARS = 256
"""The longest filter value (agent_id, session_id, task_type, a tag): as long as a write's."""


# -- a write -------------------------------------------------------------------------


def check_text(
    name: str, value: object, limit: int = MAX_ID_CHARS, *, controls: bool = True
) -> str:
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


def check_tags(value: object, max_tags: int) -> tuple[str, ...]:
    """A write's tags: a list of non-empty strings (stripped, each once, in order)."""
    if value is None or value == ():
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidMemory("tags must be a list of strings")
    if len(value) > max_tags:
        raise InvalidMemory(f"{len(value)} tags given, limit is {max_tags}")
    tags = []
    for tag in value:
        text = check_text("tag", tag, MAX_TAG_CHARS, controls=False).strip()
        if not text:
            raise InvalidMemory("tags must not be empty strings")
        if TAG_SEPARATOR in text:
            raise InvalidMemory(f"tag {text!r} holds {TAG_SEPARATOR!r}, which separates tags")
        tags.append(text)
    return tuple(dict.fromkeys(tags))


def check_importance(value: object) -> float | None:
    """``importance``: None, or a number from 0 to 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidMemory("importance must be a number between 0 and 1")
    number = finite_number(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise InvalidMemory("importance must be between 0 and 1")
    return number


def check_half_life(value: object) -> float | None:
    """``half_life_days``: None, or days above 0 and at most ``MAX_HALF_LIFE_DAYS``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidMemory("half_life_days must be a number of days")
    days = finite_number(value)
    if days is None or not 0 < days <= MAX_HALF_LIFE_DAYS:
        raise InvalidMemory(f"half_life_days must be > 0 and at most {MAX_HALF_LIFE_DAYS}")
    return days


def check_flag(name: str, value: object) -> bool:
    """A true-or-false field (``protected``, ``wait``)."""
    if not isinstance(value, bool):
        raise InvalidMemory(f"{name} must be true or false")
    return value


def check_idempotency_key(value: object) -> str | None:
    """None, or a non-empty key of at most ``MAX_ID_CHARS``."""
    if value is None:
        return None
    key = check_text("idempotency_key", value)
    if not key:
        raise InvalidMemory("idempotency_key must not be empty")
    return key


def check_visibility(value: object, owner: object) -> str:
    """``shared`` (the default) or ``private``; a private memory needs an ``owner``."""
    if value is None or value == "shared":
        return "shared"
    visibility = check_text("visibility", value) or "shared"
    if visibility not in ("shared", "private"):
        raise InvalidMemory('visibility must be "shared" or "private"')
    if visibility == "private" and not owner:
        raise InvalidMemory(
            "a private memory needs an owner: pass agent_id or as_agent, or set HINDSIGHT_AGENT_ID"
        )
    return visibility


def event_id_for(namespace: str, idempotency_key: str | None) -> str:
    """A new memory id, or a stable one derived from the idempotency key."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    digest = hashlib.sha256(f"{namespace}\x00{idempotency_key}".encode()).hexdigest()
    return digest[:32]


def check_occurred_at(value: object) -> float | None:
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


def check_context(value: object) -> str | None:
    """A write's ``context``, validated as content is and kept (``core.context.kept_context``);
    None when absent or blank."""
    if value is None:
        return None
    text = check_text("context", value, MAX_CONTEXT_CHARS)
    return kept_context(text) or None


def check_timeout(value: object, default_s: float) -> float:
    """How long a ``wait=True`` write waits: ``timeout_s`` (seconds, >= 0) or ``default_s``.

    ``0`` means one look at the outcome, not the default.
    """
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


# -- a search ------------------------------------------------------------------------


def check_search(query: object, top_k: object, mode: object) -> str:
    """The stripped query, once the arguments of a search are valid; ``InvalidQuery`` if not."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidQuery("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"query is {len(query)} characters, limit is {MAX_QUERY_CHARS}")
    problem = text_problem(query)
    if problem is not None:
        raise InvalidQuery(f"query {problem}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidQuery(f"top_k must be an integer from 1 to {MAX_TOP_K}, got {shown(top_k)}")
    if mode not in MODES:
        raise InvalidQuery(f"mode must be one of {', '.join(MODES)}, got {shown(mode)}")
    return query.strip()


def _filter_text(name: str, value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidQuery(f"{name} must be a string, got {type(value).__name__}")
    return _filter_value(name, value)


def _filter_value(name: str, value: str) -> str:
    """A value a tag clause matches exactly: bounded, no control characters."""
    if len(value) > MAX_FILTER_CHARS:
        raise InvalidQuery(f"{name} is {len(value)} characters, limit is {MAX_FILTER_CHARS}")
    problem = text_problem(value, controls=False)
    if problem is not None:
        raise InvalidQuery(f"{name} {problem}")
    return value


def _bound(name: str, value: object) -> float | None:
    if value is None:
        return None
    number = finite_number(value)
    if number is None:
        raise InvalidQuery(f"{name} must be a finite number (unix seconds), got {shown(value)}")
    return number


def search_filters(
    *,
    agent_id: object = None,
    session_id: object = None,
    task_type: object = None,
    tags: object = None,
    since: object = None,
    until: object = None,
    include_archived: object = False,
    viewer: str = "",
    occurred_since: object = None,
    occurred_until: object = None,
    trusted_only: object = False,
) -> SearchFilters:
    """Validated ``SearchFilters`` from the keyword arguments of ``search()``.

    ``viewer`` is the identity of the caller (who may see its private memories).
    """
    if tags is not None and (isinstance(tags, str) or not isinstance(tags, Sequence)):
        raise InvalidQuery("tags must be a list of strings")
    tag_values = None if tags is None else tuple(tags)
    if tag_values is not None:
        if len(tag_values) > MAX_FILTER_TAGS:
            raise InvalidQuery(f"{len(tag_values)} tags given, limit is {MAX_FILTER_TAGS}")
        # Stripped as a write strips them, so a memory is found by the tags it was given.
        if not all(isinstance(t, str) and t.strip() for t in tag_values):
            raise InvalidQuery("tags must be non-empty strings")
        tag_values = tuple(_filter_value("tag", t.strip()) for t in tag_values)
    low, high = _bound("since", since), _bound("until", until)
    if low is not None and high is not None and low > high:
        raise InvalidQuery(f"since ({low}) is after until ({high})")
    first, last = _bound("occurred_since", occurred_since), _bound("occurred_until", occurred_until)
    if first is not None and last is not None and first > last:
        raise InvalidQuery(f"occurred_since ({first}) is after occurred_until ({last})")
    if not isinstance(include_archived, bool):
        raise InvalidQuery("include_archived must be true or false")
    if not isinstance(trusted_only, bool):
        raise InvalidQuery("trusted_only must be true or false")
    return SearchFilters(
        agent_id=_filter_text("agent_id", agent_id),
        session_id=_filter_text("session_id", session_id),
        task_type=_filter_text("task_type", task_type),
        tags=tag_values,
        since=low,
        until=high,
        include_archived=include_archived,
        viewer=viewer,
        occurred_since=first,
        occurred_until=last,
        trusted_only=trusted_only,
    )


def check_max_tokens(max_tokens: object) -> int | None:
    """``max_tokens`` once valid (None or a positive integer); ``InvalidQuery`` if not."""
    if max_tokens is None:
        return None
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidQuery(f"max_tokens must be a positive integer, got {shown(max_tokens)}")
    return max_tokens
