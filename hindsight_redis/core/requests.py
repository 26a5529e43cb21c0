"""What a write and a search take: each field defined once, validated once.

Pure module: no I/O. ``WriteOptions`` and ``SearchOptions`` are the keyword
arguments of ``write()`` and ``search()``, each field with its type, default
and description. Everything that takes a write or a search is made from
them: the clients' signatures (``**options: Unpack[WriteOptions]``, checked
by type checkers), the argument schemas of the MCP and LangChain tools
(``arguments_model``) and the CLI's flags (``option_fields``). A new field is
added here once; ``parse_write`` and ``parse_search`` (with ``core.checks``)
validate every field in one place, into a ``WriteRequest`` or a
``SearchRequest``.
"""

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, NotRequired, Required, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo
from typing_extensions import TypedDict

from hindsight_redis.core.checks import (
    MAX_SOURCE_CHARS,
    check_context,
    check_flag,
    check_half_life,
    check_idempotency_key,
    check_importance,
    check_max_tokens,
    check_occurred_at,
    check_search,
    check_tags,
    check_text,
    check_timeout,
    check_visibility,
    event_id_for,
    search_filters,
)
from hindsight_redis.core.models import MemoryEvent, SearchFilters, SearchMode, Visibility
from hindsight_redis.errors import InvalidMemory, InvalidQuery


class UnixTime:
    """Marks a field whose value is unix seconds (the CLI also reads an ISO date there)."""


UNIX_TIME = UnixTime()


class WriteOptions(TypedDict, total=False):
    """The keyword arguments of ``write()`` (and the keys of a ``write_many()`` item)."""

    context: Annotated[
        str | None,
        Field(
            default=None,
            description="The text just before it (e.g. the previous message), when the memory "
            "alone is ambiguous: embedded with it for the contextual vector, not stored as its "
            "content (at most 4,000 characters; the last 600 bytes are kept).",
        ),
    ]
    agent_id: Annotated[
        str | None,
        Field(
            default=None,
            description="Who wrote it; default: the caller. A tool call names another writer "
            "only with an admin token.",
        ),
    ]
    session_id: Annotated[
        str | None, Field(default=None, description="The conversation or run it came from.")
    ]
    task_type: Annotated[
        str | None,
        Field(
            default=None,
            description='Its kind, e.g. "preference", "dialogue", "code" (its default half-life '
            "follows it).",
        ),
    ]
    source: Annotated[
        str | None,
        Field(default=None, description="What produced it, e.g. a turn or a tool call."),
    ]
    tags: Annotated[
        Sequence[str] | None,
        Field(default=None, description="Labels a search can require, e.g. user:alice."),
    ]
    protected: Annotated[
        bool, Field(default=False, description="Never archived by retention sweeps.")
    ]
    visibility: Annotated[
        Visibility,
        Field(
            default="shared",
            description='"private": only its writer sees it; "shared": every agent of the '
            "namespace.",
        ),
    ]
    importance: Annotated[
        float | None,
        Field(default=None, description="A hint from 0 to 1 that nudges the write score."),
    ]
    half_life_days: Annotated[
        float | None,
        Field(
            default=None,
            description="Days for its retention to halve while unused (e.g. 365 for a lasting "
            "preference); default: its task type's, else half_life_days.",
        ),
    ]
    occurred_at: Annotated[
        float | None,
        Field(
            default=None,
            description="When what it tells of happened (unix seconds), if known and not now; "
            "searches show it and can filter on it.",
        ),
        UNIX_TIME,
    ]
    idempotency_key: Annotated[
        str | None,
        Field(default=None, description="Makes a retried write a no-op (the first one's id)."),
    ]
    wait: Annotated[
        bool,
        Field(
            default=False,
            description="Return once it is searchable, or say why it was dropped.",
        ),
    ]
    timeout_s: Annotated[
        float | None,
        Field(
            default=None,
            description="Longest a waiting write waits, in seconds (default "
            "write_wait_timeout_s; 0 looks once).",
        ),
    ]


class WriteItem(WriteOptions, total=False):
    """One memory of ``write_many()``: its ``content`` and the options of ``write()``."""

    content: Required[Annotated[str, Field(description="The memory's text.")]]


class SearchOptions(TypedDict, total=False):
    """The keyword arguments of ``search()``: how many, how, and the filters."""

    top_k: Annotated[int, Field(default=5, description="How many hits at most (1-100).")]
    mode: Annotated[
        SearchMode,
        Field(
            default="hybrid",
            description="hybrid (meaning and keywords), vector (meaning) or keyword.",
        ),
    ]
    agent_id: Annotated[
        str | None, Field(default=None, description="Only memories written by this agent.")
    ]
    session_id: Annotated[
        str | None, Field(default=None, description="Only memories of this session.")
    ]
    task_type: Annotated[
        str | None, Field(default=None, description="Only memories of this task type.")
    ]
    tags: Annotated[
        Sequence[str] | None,
        Field(default=None, description="Only memories carrying every one of these tags."),
    ]
    since: Annotated[
        float | None,
        Field(default=None, description="Only memories written at or after (unix seconds)."),
        UNIX_TIME,
    ]
    until: Annotated[
        float | None,
        Field(default=None, description="Only memories written at or before (unix seconds)."),
        UNIX_TIME,
    ]
    occurred_since: Annotated[
        float | None,
        Field(
            default=None,
            description="Only memories that happened at or after (unix seconds; those written "
            "without occurred_at do not match).",
        ),
        UNIX_TIME,
    ]
    occurred_until: Annotated[
        float | None,
        Field(default=None, description="Only memories that happened at or before."),
        UNIX_TIME,
    ]
    include_archived: Annotated[
        bool, Field(default=False, description="Archived (forgotten) memories too.")
    ]
    trusted_only: Annotated[
        bool,
        Field(
            default=False,
            description="Only memories whose writer was identified (a token, or the "
            "process's configured agent) or that a person reviewed. A namespace can "
            "require it (trusted_only setting).",
        ),
    ]
    max_tokens: Annotated[
        int | None,
        Field(
            default=None,
            description="Hits in rank order until their content would pass this many tokens.",
        ),
    ]


class SearchQuery(SearchOptions, total=False):
    """A search: its ``query`` and the options of ``search()``."""

    query: Required[Annotated[str, Field(description="What to recall, in words.")]]


def option_fields(options: type[Any]) -> dict[str, tuple[Any, FieldInfo]]:
    """Each field of a request's typed dict: its type and its ``FieldInfo`` (default,
    description, markers such as ``UNIX_TIME`` in ``metadata``); required fields first."""
    hints = get_type_hints(options, include_extras=True)
    required: frozenset[str] = getattr(options, "__required_keys__", frozenset())
    found: dict[str, tuple[Any, FieldInfo]] = {}
    for name in sorted(hints, key=lambda n: n not in required):
        hint = hints[name]
        while get_origin(hint) in (Required, NotRequired):
            hint = get_args(hint)[0]
        info = FieldInfo.from_annotation(hint)
        found[name] = (info.annotation, info)
    return found


def arguments_model(
    name: str, options: type[Any], *, exclude: tuple[str, ...] = ()
) -> type[BaseModel]:
    """A pydantic model of a request's fields (for tool schemas); unknown keys are ignored."""
    fields: dict[str, Any] = {
        field: Annotated[annotation, info]
        for field, (annotation, info) in option_fields(options).items()
        if field not in exclude
    }
    return create_model(name, __config__=ConfigDict(extra="ignore"), **fields)


WRITE_FIELDS = tuple(option_fields(WriteItem))
"""The fields of a write, ``content`` first: ``write()``'s arguments, a ``write_many()``
item's keys, ``memory_write``'s arguments, the CLI's ``write`` flags."""
SEARCH_OPTIONS = tuple(option_fields(SearchOptions))
"""The options of a search (the query aside)."""
_WRITE_FIELD_SET = frozenset(WRITE_FIELDS)
_SEARCH_OPTION_SET = frozenset(SEARCH_OPTIONS)


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """A write once valid: its stream event, and how long to wait for its outcome (None:
    not waiting)."""

    event: MemoryEvent
    wait_s: float | None = None
    keyed: bool = False
    """Whether an idempotency key names it (a retry returns the first write's receipt)."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search once valid: the stripped query, how many hits, the mode, the filters (the
    caller's view included) and the token budget."""

    query: str
    top_k: int = 5
    mode: SearchMode = "hybrid"
    filters: SearchFilters = field(default_factory=SearchFilters)
    max_tokens: int | None = None


def parse_write(
    fields: Mapping[str, Any],
    *,
    namespace: str,
    max_content_chars: int,
    max_tags: int,
    default_wait_s: float = 30.0,
    now: float | None = None,
    provenance: str = "",
    hold: str | None = None,
) -> WriteRequest:
    """Validate a write's fields (``content`` and ``WriteOptions``) into a ``WriteRequest``.

    ``provenance`` and ``hold`` are the write edge's (``MemoryEvent``'s fields of the
    same names): how the writer was identified, and why the write must be held.
    ``InvalidMemory`` names the first bad field and what is wrong with it.
    """
    unknown = fields.keys() - _WRITE_FIELD_SET
    if unknown:
        raise InvalidMemory(f"unknown field(s): {', '.join(sorted(unknown))}")
    content = fields.get("content")
    if not isinstance(content, str):
        raise InvalidMemory("content must be a string")
    if not content.strip():
        raise InvalidMemory("content must not be empty")
    check_text("content", content, max_content_chars)
    importance = check_importance(fields.get("importance"))
    half_life = check_half_life(fields.get("half_life_days"))
    occurred = check_occurred_at(fields.get("occurred_at"))
    protected = check_flag("protected", fields.get("protected", False))
    key = check_idempotency_key(fields.get("idempotency_key"))
    visibility = check_visibility(fields.get("visibility"), fields.get("agent_id"))
    wait = check_flag("wait", fields.get("wait", False))
    timeout = fields.get("timeout_s")
    wait_s = check_timeout(timeout, default_wait_s) if wait or timeout is not None else None
    event = MemoryEvent(
        event_id=event_id_for(namespace, key),
        namespace=namespace,
        content=content,
        context=check_context(fields.get("context")),
        agent_id=check_text("agent_id", fields.get("agent_id"), controls=False),
        session_id=check_text("session_id", fields.get("session_id"), controls=False),
        task_type=check_text("task_type", fields.get("task_type"), controls=False),
        source=check_text("source", fields.get("source"), MAX_SOURCE_CHARS),
        tags=check_tags(fields.get("tags"), max_tags),
        protected=protected,
        importance=importance,
        visibility=visibility,
        created_at=time.time() if now is None else now,
        notify=wait,
        half_life_days=half_life,
        occurred_at=occurred,
        provenance=provenance,
        hold=hold,
    )
    return WriteRequest(event, wait_s if wait else None, keyed=key is not None)


def parse_search(query: object, options: Mapping[str, Any], *, viewer: str) -> SearchRequest:
    """Validate a search's query and ``SearchOptions`` into a ``SearchRequest``.

    ``viewer`` is who searches (it sees the shared memories and its own).
    ``InvalidQuery`` names the first bad argument and what is wrong with it.
    """
    unknown = options.keys() - _SEARCH_OPTION_SET
    if unknown:
        raise InvalidQuery(f"unknown argument(s): {', '.join(sorted(unknown))}")
    top_k = options.get("top_k", 5)
    mode = options.get("mode", "hybrid")
    text = check_search(query, top_k, mode)
    filters = search_filters(
        agent_id=options.get("agent_id"),
        session_id=options.get("session_id"),
        task_type=options.get("task_type"),
        tags=options.get("tags"),
        since=options.get("since"),
        until=options.get("until"),
        occurred_since=options.get("occurred_since"),
        occurred_until=options.get("occurred_until"),
        include_archived=options.get("include_archived", False),
        viewer=viewer,
        trusted_only=options.get("trusted_only", False),
    )
    return SearchRequest(text, top_k, mode, filters, check_max_tokens(options.get("max_tokens")))
