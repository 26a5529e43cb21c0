"""``write_many``'s ``context_from_previous``: each session's last contents, across calls.

A transcript written in batches keeps its context: an item with a
``session_id`` and no ``context`` of its own gets the contents of the ``N``
previous items of its session (``core.context`` says what of it is kept).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from hindsight_redis.core.context import kept_context
from hindsight_redis.errors import InvalidMemory, shown

MAX_CONTEXT_FROM_PREVIOUS = 16
"""The most previous items ``write_many(context_from_previous=...)`` may join."""


def join_contents(contents: Sequence[str]) -> str:
    """Previous items' contents as one context (oldest first, a space between), kept."""
    return kept_context(" ".join(c.strip() for c in contents))


_Key = tuple[str, str, str]  # (session_id, visibility, owner of a private item)


class SessionTails:
    """The last contents written in each session, remembered across ``write_many`` calls.

    Bounded: an LRU of at most ``max_sessions`` sessions. A private item's
    content only becomes the context of later private items of the same
    owner, so no memory carries another's private text.
    """

    def __init__(self, max_sessions: int = 1_000) -> None:
        self.max_sessions = max_sessions
        self._tails: OrderedDict[_Key, tuple[str, ...]] = OrderedDict()

    def fill(
        self, items: Sequence[Mapping[str, Any]], depth: int, caller: str
    ) -> tuple[list[Mapping[str, Any]], dict[_Key, tuple[str, ...]]]:
        """``items`` with ``context`` filled from the ``depth`` previous items of their
        session, and the tails to ``remember`` once the batch is accepted.

        An item with a ``context`` of its own (even ``""``) keeps it; one
        without a ``session_id`` gets none. ``caller`` owns items without ``agent_id``.
        """
        seen: dict[_Key, tuple[str, ...]] = {}
        filled: list[Mapping[str, Any]] = []
        for item in items:
            key = _key(item, caller)
            if key is None:
                filled.append(item)
                continue
            previous = seen[key] if key in seen else self._tails.get(key, ())
            if item.get("context") is None and previous:
                item = {**item, "context": join_contents(previous[-depth:])}
            content = item.get("content")
            if isinstance(content, str):
                seen[key] = (*previous, content)[-depth:]
            filled.append(item)
        return filled, seen

    def remember(self, tails: Mapping[_Key, tuple[str, ...]]) -> None:
        """Keep these sessions' last contents (most recent sessions last; the oldest go)."""
        for key, contents in tails.items():
            self._tails[key] = contents
            self._tails.move_to_end(key)
        while len(self._tails) > self.max_sessions:
            self._tails.popitem(last=False)

    def __len__(self) -> int:
        return len(self._tails)


def _key(item: Mapping[str, Any], caller: str) -> _Key | None:
    """Which transcript an item belongs to; None when it has no (valid) session_id."""
    session = item.get("session_id")
    if not isinstance(session, str) or not session:
        return None
    if item.get("visibility") == "private":
        owner = item.get("agent_id") or caller
        return (session, "private", owner if isinstance(owner, str) else "")
    return (session, "shared", "")


def context_depth(value: object) -> int:
    """``write_many``'s ``context_from_previous``, validated: 0 (off) to
    ``MAX_CONTEXT_FROM_PREVIOUS``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMemory(f"context_from_previous must be a whole number, got {shown(value)}")
    if not 0 <= value <= MAX_CONTEXT_FROM_PREVIOUS:
        raise InvalidMemory(
            f"context_from_previous must be 0 (off) to {MAX_CONTEXT_FROM_PREVIOUS}, got {value}"
        )
    return value
