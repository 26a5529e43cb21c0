"""A chat turn's leading speaker label ("Caroline: ..."), which is not content.

Pure module: the rule filter, the write score and the fact comparison read a
turn without it, so "Mel: thanks!" is an acknowledgement like "thanks!". The
search reads it (``speaker_label``): a question that names a person ranks that
person's own turns a little higher.
"""

from __future__ import annotations

import re

_SPEAKER_LABEL = re.compile(r"^\s*((?:[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}|[^\W\d_]{1,8})):\s+")


def strip_speaker_label(text: str) -> str:
    """``text`` without a leading speaker label: "Caroline: ok thanks" -> "ok thanks"."""
    return _SPEAKER_LABEL.sub("", text, count=1)


def speaker_label(text: str) -> str | None:
    """The leading speaker label of ``text``: "Caroline: ok thanks" -> "Caroline"; None
    without one."""
    match = _SPEAKER_LABEL.match(text)
    return match.group(1) if match else None
