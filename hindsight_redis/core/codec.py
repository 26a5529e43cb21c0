"""Pure conversions of what travels through Redis: write events and their outcomes.

No I/O. Stream entries carry one field, ``e``, holding the msgpack-encoded
event; anything that does not decode is a ``PoisonMessage``. An outcome
(what became of a write) is a small JSON object, stored under its outcome key
and pushed to a writer waiting with ``wait=True``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgpack

from hindsight_redis.core.models import EVENT_VERSION, MemoryEvent
from hindsight_redis.errors import PoisonMessage

EVENT_FIELD = b"e"
_EVENT_ORDER = tuple(MemoryEvent.__dataclass_fields__)
_EVENT_KEYS = frozenset(_EVENT_ORDER)


def encode_event(event: MemoryEvent) -> bytes:
    """msgpack bytes of an event, as stored in the stream field ``e``."""
    data = {name: getattr(event, name) for name in _EVENT_ORDER}
    data["tags"] = list(event.tags)
    for name in ("half_life_days", "occurred_at"):  # added later: older workers still
        if data[name] is None:  # read the events that do not set them
            del data[name]
    for name in ("context", "hold"):  # added later too
        if data[name] is None:
            del data[name]
    for name in ("provenance", "reviewed"):  # added later too: only when set
        if not data[name]:
            del data[name]
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


def encode_outcome(outcome: Mapping[str, Any]) -> str:
    """The JSON stored under an outcome key and pushed to waiting writers."""
    return json.dumps(outcome, separators=(",", ":"), ensure_ascii=False)


def decode_outcome(raw: bytes | str) -> dict[str, Any]:
    """The inverse of ``encode_outcome``."""
    value: dict[str, Any] = json.loads(raw)
    return value


def pack_fields(fields: Mapping[str, str | bytes]) -> bytes:
    """A hash's field/value pairs as one msgpack array, for a script to ``HSET``.

    Cheaper than one script argument per field (``pack_for_script``).
    """
    return pack_for_script([x for pair in fields.items() for x in pair])


def pack_for_script(value: Any) -> bytes:
    """msgpack of ``value`` for a Lua script to ``cmsgpack.unpack``: one argument
    instead of many (each costs the client more to send than the bytes do).

    Packed as raw strings (``use_bin_type=False``), the only kind Lua's
    ``cmsgpack`` reads; ``bytes`` arrive in Lua as strings.
    """
    packed: bytes = msgpack.packb(value, use_bin_type=False)
    return packed
