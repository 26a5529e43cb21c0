"""Reading Redis replies: bytes to text, RESP2 lists and RESP3 maps, ``FT.SEARCH`` rows.

Pure module: no I/O. Every module that reads a reply (the searcher, the
pipeline's dedup and refine stages, the admin reads, the index) uses these,
so a reply is parsed one way whatever protocol the connection speaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

RESP_PROTOCOL = 2
"""The protocol the package's connections speak (redis-py 8 defaults to RESP3).

Replies are read the same way in both (below), but hiredis builds RESP3's
per-row maps about five times slower than RESP2's flat lists: 57.8 against
11.9 us for a search leg's reply (docs/decisions.md, "RESP2 on every connection"). A
``protocol`` in the Redis URL still wins."""

NEVER_DECODE: dict[str, Any] = {"NEVER_DECODE": True}
"""``execute_command`` option that keeps reply values as bytes (vectors)."""


def as_text(value: Any) -> str:
    """A Redis reply value as ``str`` (replies may be bytes, str or None)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def reply_map(reply: Any) -> dict[str, Any]:
    """A RESP2 flat list or RESP3 map reply as a ``str``-keyed dict."""
    if isinstance(reply, Mapping):
        return {as_text(k): v for k, v in reply.items()}
    if isinstance(reply, list | tuple):
        pairs = iter(reply)  # keys are bytes on a decoding-off connection: decode them inline
        return {
            (k.decode("utf-8", "replace") if k.__class__ is bytes else as_text(k)): v
            for k, v in zip(pairs, pairs, strict=False)
        }
    return {}


# Field names of search rows, decoded once, not once per row (a schema has few).
_FIELD_NAMES: dict[Any, str] = {}
_MAX_FIELD_NAMES = 4096


def _field_name(raw: Any) -> str:
    name = as_text(raw)
    if len(_FIELD_NAMES) < _MAX_FIELD_NAMES:
        _FIELD_NAMES[raw] = name
    return name


def _row_fields(pairs: Any) -> dict[str, Any]:
    """A row's (name, value) pairs as a dict with the names decoded once (``_FIELD_NAMES``)."""
    names = _FIELD_NAMES
    return {names.get(k) or _field_name(k): v for k, v in pairs}


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One document of an ``FT.SEARCH`` reply: its key, score (``WITHSCORES``) and fields."""

    key: str
    score: float | None
    fields: dict[str, Any]


def search_rows(reply: Any, *, with_scores: bool = False) -> list[SearchRow]:
    """The rows of an ``FT.SEARCH`` reply, RESP2 or RESP3."""
    rows: list[SearchRow] = []
    if isinstance(reply, Mapping):
        for item in reply_map(reply).get("results") or []:
            if b"id" in item:  # a decoding-off connection: bytes keys, read as they are
                key, score, extra = item[b"id"], item.get(b"score"), item.get(b"extra_attributes")
            else:
                key, score, extra = item.get("id"), item.get("score"), item.get("extra_attributes")
            fields = _row_fields(extra.items()) if extra else {}
            rows.append(SearchRow(as_text(key), None if score is None else float(score), fields))
        return rows
    items = list(reply[1:])
    step = 3 if with_scores else 2
    for i in range(0, len(items) - step + 1, step):
        score = float(items[i + 1]) if with_scores else None
        pairs = iter(items[i + step - 1] or ())
        fields = _row_fields(zip(pairs, pairs, strict=False))
        rows.append(SearchRow(as_text(items[i]), score, fields))
    return rows


def search_total(reply: Any) -> int:
    """The ``total_results`` of an ``FT.SEARCH`` reply, RESP2 or RESP3."""
    if isinstance(reply, Mapping):
        return int(reply_map(reply).get("total_results", 0))
    return int(reply[0])


def entries_added(xinfo_stream: Any) -> int:
    """``entries-added`` of an ``XINFO STREAM`` reply (writes ever appended)."""
    info = reply_map(xinfo_stream)
    return int(info.get("entries-added") or 0)


def entry_ms(entry_id: str) -> int:
    """The millisecond timestamp of a stream entry id (``<ms>-<seq>``)."""
    return int(entry_id.split("-", 1)[0])


def aggregate_page(reply: Any) -> tuple[list[dict[str, Any]], int]:
    """The rows and the next cursor (0: done) of ``FT.AGGREGATE ... WITHCURSOR`` or
    ``FT.CURSOR READ``, RESP2 or RESP3."""
    page, cursor = reply[0], int(reply[1])
    if isinstance(page, Mapping):
        rows = [
            reply_map(reply_map(r).get("extra_attributes") or {})
            for r in reply_map(page).get("results") or []
        ]
    else:
        rows = [reply_map(r) for r in page[1:]]
    return rows, cursor
