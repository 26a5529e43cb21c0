"""Text laid out for a terminal or for a pipe: the width to draw at, the cells a character
takes, tables whose last column is free text, and the words that differ between two texts.

The width comes from one place, ``screen_width``: the terminal's columns when stdout is a
terminal (``COLUMNS`` first, as ``shutil.get_terminal_size`` reads it), and None when it is
not; then rows are printed whole, for whoever reads them next (``grep``, a script, a file).
Everything else here is pure: it takes that width and returns text.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RESET = "\x1b[0m"
_NARROWEST = 20  # a terminal said to be narrower than this is drawn at this width
TEXT_LEAST = 24
"""Cells the text column gets at least beside the others; on a narrower terminal it goes
under its row."""


def screen_width(stream: TextIO | None = None) -> int | None:
    """Columns of the terminal ``stream`` (stdout by default) is; None when it is not one."""
    stream = sys.stdout if stream is None else stream
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # replaced by an object without a terminal, or closed
        return None
    return max(shutil.get_terminal_size().columns, _NARROWEST)


def colours(stream: TextIO | None = None) -> bool:
    """Whether to style text for ``stream``: a terminal, ``NO_COLOR`` unset, not ``TERM=dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return screen_width(stream) is not None


def char_cells(ch: str) -> int:
    """Terminal cells of one character: 2 for wide (CJK) ones, 0 for combining marks."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cells(text: str) -> int:
    """Terminal cells of ``text``, its style sequences not counted."""
    return sum(map(char_cells, _ANSI.sub("", text)))


def flat(text: str) -> str:
    """``text`` on one line: every run of whitespace one space."""
    return " ".join(text.split())


def cut(text: str, width: int) -> str:
    """``text`` (one line) cut to ``width`` cells, with an ellipsis when cut; a style left
    open by the cut is closed."""
    if cells(text) <= width:
        return text
    out: list[str] = []
    used, styled = 0, False
    for part in re.split(f"({_ANSI.pattern})", text):
        if _ANSI.fullmatch(part):
            out.append(part)
            styled = part != _RESET
            continue
        for ch in part:
            if used + char_cells(ch) > width - 1:
                return "".join(out) + (_RESET if styled else "") + "…"
            out.append(ch)
            used += char_cells(ch)
    return "".join(out)


def pad(text: str, width: int, *, right: bool = False) -> str:
    """``text`` cut to ``width`` cells and padded with spaces to exactly that many."""
    shown = cut(text, width)
    room = " " * (width - cells(shown))
    return room + shown if right else shown + room


def wrap(text: str, width: int) -> list[str]:
    """``text`` (one line) in lines of at most ``width`` cells, broken between words (a
    word wider than a line, or a run of wide characters, is broken where it must)."""
    lines: list[str] = []
    line, used = "", 0
    for word in text.split(" "):
        size = cells(word)
        if line and used + 1 + size <= width:
            line, used = f"{line} {word}", used + 1 + size
            continue
        if line:
            lines.append(line)
        line, used = "", 0
        while cells(word) > width:
            head = _head(word, width)
            lines.append(head)
            word = word[len(head) :]
        line, used = word, cells(word)
    lines.append(line)
    return lines


def _head(word: str, width: int) -> str:
    """The longest start of ``word`` that fits in ``width`` cells (one character at least),
    its style sequences kept."""
    used, end = 0, 0
    while end < len(word):
        match = _ANSI.match(word, end)
        if match:
            end = match.end()
            continue
        size = char_cells(word[end])
        if used + size > width and used:
            break
        used, end = used + size, end + 1
    return word[:end]


# -- tables ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a table but its last: a title and how its cells are sized on a terminal."""

    title: str
    right: bool = False
    """Aligned right (numbers)."""
    cap: int | None = None
    """On a terminal, at most this many cells (longer values are cut)."""
    least: int | None = None
    """On a narrow terminal, shrunk down to this many cells to leave the text its room."""
    width: int = 0
    """At least this many cells."""
    optional: bool = False
    """Left out on a terminal too narrow for it and the text's ``TEXT_LEAST`` cells."""


def table(
    columns: Sequence[Column],
    text_title: str,
    rows: Sequence[Sequence[str]],
    *,
    width: int | None,
    wrap_text: bool = False,
) -> list[str]:
    """``rows`` as lines: each row's cells under ``columns``, then its text (the last cell).

    ``width`` None: nothing is cut, every text is printed whole on its row. A width: each
    line fits it; the text is cut to the room left (``wrap_text``: wrapped onto the lines
    below, under the text column), and when fewer than ``TEXT_LEAST`` cells are left it
    goes on the lines under its row, indented.
    """
    sizes = [
        max(column.width, cells(column.title), *(cells(row[i]) for row in rows))
        for i, column in enumerate(columns)
    ]
    if width is not None:
        sizes = [min(s, c.cap) if c.cap else s for s, c in zip(sizes, columns, strict=True)]
        _shrink(sizes, columns, width)
        shown = _shown(sizes, columns, width)
        if len(shown) < len(columns):
            columns = [columns[i] for i in shown]
            sizes = [sizes[i] for i in shown]
            rows = [[row[i] for i in shown] + [row[-1]] for row in rows]
    lead = sum(sizes) + 2 * len(columns)
    room = None if width is None else width - lead
    under = room is not None and room < TEXT_LEAST
    lines = []
    for cells_, text in [([c.title for c in columns], text_title)] + [
        (list(row[:-1]), flat(row[-1])) for row in rows
    ]:
        head = "".join(
            pad(value, size, right=column.right) + "  "
            for value, size, column in zip(cells_, sizes, columns, strict=True)
        )
        if width is None or room is None:
            lines.append(f"{head}{text}".rstrip())
        elif under:
            lines.append(cut(head.rstrip(), width))
            body = wrap(text, width - 4) if wrap_text else [cut(text, width - 4)]
            lines += [f"    {line}".rstrip() for line in body if line]
        elif wrap_text:
            first, *more = wrap(text, room)
            lines.append(f"{head}{first}".rstrip())
            lines += [" " * lead + line for line in more]
        else:
            lines.append(f"{head}{cut(text, room)}".rstrip())
    return lines


def _shrink(sizes: list[int], columns: Sequence[Column], width: int) -> None:
    """Narrow the columns that may be (right to left) until the text has its room."""
    short = TEXT_LEAST - (width - sum(sizes) - 2 * len(columns))
    for i in reversed(range(len(columns))):
        least = columns[i].least
        if short <= 0:
            return
        if least is not None and sizes[i] > least:
            give = min(sizes[i] - least, short)
            sizes[i] -= give
            short -= give


def _shown(sizes: Sequence[int], columns: Sequence[Column], width: int) -> list[int]:
    """The columns kept: the optional ones are left out (right to left) while the text
    lacks its room."""
    shown = list(range(len(columns)))
    for i in reversed(range(len(columns))):
        if width - sum(sizes[j] + 2 for j in shown) >= TEXT_LEAST:
            break
        if columns[i].optional:
            shown.remove(i)
    return shown


# -- what changed ---------------------------------------------------------------

_STYLE = {"old": "\x1b[1;31m", "new": "\x1b[1;32m"}  # bold red, bold green
_MARKS = {"old": ("[-", "-]"), "new": ("{+", "+}")}


def _tokens(text: str) -> list[tuple[str, str]]:
    """``text`` as (space before, token): words, and each wide character on its own (CJK
    text has no spaces between its words)."""
    found: list[tuple[str, str]] = []
    space, word = "", ""
    for ch in text:
        if ch.isspace():
            if word:
                found.append((space, word))
                space, word = "", ""
            space = " "
        elif char_cells(ch) == 2:
            if word:
                found.append((space, word))
                space, word = "", ""
            found.append((space, ch))
            space = ""
        else:
            word += ch
    if word:
        found.append((space, word))
    return found


def _marked(tokens: Sequence[tuple[str, str]], side: str, styled: bool) -> str:
    if not tokens:
        return ""
    if styled:  # each word styled on its own, so that a wrapped line never carries a style
        return "".join(f"{space}{_STYLE[side]}{word}{_RESET}" for space, word in tokens)
    opening, closing = _MARKS[side]
    body = "".join(space + word for space, word in tokens)
    return f"{tokens[0][0]}{opening}{body.lstrip()}{closing}"


def changes(old: str, new: str, *, styled: bool = False) -> tuple[str, str]:
    """``old`` and ``new`` (each on one line) with the words that differ marked: removed
    ones in ``old``, added ones in ``new``; ``styled``: bold red and green, else
    ``[-removed-]`` and ``{+added+}``."""
    a, b = _tokens(old), _tokens(new)
    matcher = difflib.SequenceMatcher(a=[w for _, w in a], b=[w for _, w in b], autojunk=False)
    left: list[str] = []
    right: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            left += [space + word for space, word in a[i1:i2]]
            right += [space + word for space, word in b[j1:j2]]
            continue
        left.append(_marked(a[i1:i2], "old", styled))
        right.append(_marked(b[j1:j2], "new", styled))
    return "".join(left).strip(), "".join(right).strip()
