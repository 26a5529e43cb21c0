"""Which writing system a character belongs to: the one table the package uses.

Pure module. The rule filter weighs letters by script, the index tags a
memory ``chinese`` when it holds Han characters, a query's Han runs are sent
to the server for word segmentation, and the conflict judge and the
extractive summarizer treat each CJK character as a word: all of them ask
this module, so a character that makes a document Chinese also gets a query
segmented.
"""

from __future__ import annotations

import bisect
import re

# (first, last, script), sorted and disjoint. Letters and digits outside every
# range are "latin" below U+0250 (and in Latin Extended Additional), else "other".
SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x1100, 0x11FF, "hangul"),  # Jamo
    (0x1F00, 0x1FFF, "greek"),  # Greek Extended
    (0x3040, 0x30FF, "kana"),  # Hiragana, Katakana
    (0x3130, 0x318F, "hangul"),  # compatibility Jamo
    (0x31F0, 0x31FF, "kana"),  # Katakana phonetic extensions
    (0x3400, 0x4DBF, "han"),  # Extension A
    (0x4E00, 0x9FFF, "han"),  # Unified Ideographs
    (0xA960, 0xA97F, "hangul"),  # Jamo Extended-A
    (0xAC00, 0xD7FF, "hangul"),  # Syllables, Jamo Extended-B
    (0xF900, 0xFAFF, "han"),  # Compatibility Ideographs
    (0xFF66, 0xFF9F, "kana"),  # halfwidth Katakana
    (0x1B000, 0x1B16F, "kana"),  # Kana Supplement, Extended-A
    (0x20000, 0x2FA1F, "han"),  # Extensions B-F, I; Compatibility Supplement
    (0x30000, 0x323AF, "han"),  # Extensions G, H
)
_STARTS = [low for low, _, _ in SCRIPT_RANGES]
# Scripts written without spaces between words.
UNSPACED = frozenset({"han", "kana"})
CJK = frozenset({"han", "kana", "hangul"})


def _char_class(scripts: frozenset[str]) -> str:
    """A regex character-class body (no brackets) matching the given scripts."""
    return "".join(
        f"{chr(low)}-{chr(high)}" for low, high, name in SCRIPT_RANGES if name in scripts
    )


HAN_CLASS = _char_class(frozenset({"han"}))
"""Regex class body of Han characters, for ``[...]`` in other modules' patterns."""
CJK_CLASS = _char_class(CJK)
"""Regex class body of Han, kana and hangul characters."""
_HAN_RUN = re.compile(f"[{HAN_CLASS}]+")


def script_of(ch: str) -> str:
    """The script of one letter or digit: ``latin``, ``han``, ``kana``, ``digit``, ...

    Digits of any script are ``digit``; letters outside the table are ``other``.
    """
    if ch.isdigit():
        return "digit"
    code = ord(ch)
    if code < 0x0250 or 0x1E00 <= code <= 0x1EFF:
        return "latin"
    i = bisect.bisect_right(_STARTS, code) - 1
    if i >= 0:
        low, high, name = SCRIPT_RANGES[i]
        if low <= code <= high:
            return name
    return "other"


def is_cjk(ch: str) -> bool:
    """True for a Han, kana or hangul character."""
    return script_of(ch) in CJK


def has_han(text: str) -> bool:
    """True when ``text`` holds at least one Han character."""
    return _HAN_RUN.search(text) is not None


def han_runs(text: str) -> list[str]:
    """The runs of consecutive Han characters in ``text``, in order."""
    return _HAN_RUN.findall(text)


def is_han_word(word: str) -> bool:
    """True when ``word`` is made of Han characters only."""
    return _HAN_RUN.fullmatch(word) is not None


def mostly_cjk(text: str) -> bool:
    """True when more than half of the letters and digits of ``text`` are CJK."""
    alnum = [ch for ch in text if ch.isalnum()]
    return sum(1 for ch in alnum if is_cjk(ch)) * 2 > len(alnum)


def text_problem(text: str, *, controls: bool = True) -> str | None:
    """What makes ``text`` unfit to store or to filter on, in words; None when it is fine.

    A lone surrogate always (UTF-8 cannot carry one, yet JSON's ``"\\ud800"``
    decodes to one). With ``controls=False`` also a C0 control character or
    DEL: identifiers and tags become filter values, where NUL ends the query
    and U+001F is the index's tag separator.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"holds a lone surrogate (U+{ord(text[e.start]):04X} at {e.start}): not valid text"
    if not controls:
        for i, ch in enumerate(text):
            if ch < " " or ch == "\x7f":
                return f"holds a control character (U+{ord(ch):04X} at {i})"
    return None


_SYMMETRIC = frozenset({"and", "or", "&", "with", "nor", "和", "与", "及", "或"})
_COPULAS = frozenset({"is", "are", "was", "were", "means", "equals"})  # "X is Y" = "Y is X"


def two_words_exchanged(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The same words in the same order but two, or two phrases of a few words each
    around the same words, which traded places ("prefers EUR over USD" / "... USD over
    EUR", "Bob pays Alice" / "Alice pays Bob", "the frontend depends on the auth service"
    / "the auth service depends on the frontend"): who does what to whom, or what is
    preferred over what, was reversed. A pair joined by "and", "or", "with" ("Alice and
    Bob" / "Bob and Alice"), or by "is" ("my manager is Bob" / "Bob is my manager"),
    says the same either way; a restatement in another order moves a phrase to the
    front or the end (nothing stays between the two)."""
    if len(a) != len(b) or a == b or sorted(a) != sorted(b):
        return False
    pairs = list(zip(a, b, strict=True))
    start = next(i for i, (x, y) in enumerate(pairs) if x != y)
    end = next(i for i in range(len(pairs), 0, -1) if pairs[i - 1][0] != pairs[i - 1][1])
    mine, theirs = a[start:end], b[start:end]
    n = len(mine)
    for first in range(1, min(n, _PHRASE + 1)):
        for last in range(1, min(n - first, _PHRASE) + 1):
            between = mine[first : n - last]
            if theirs != mine[n - last :] + between + mine[:first]:
                continue
            if between and not (len(between) == 1 and between[0] in _SYMMETRIC | _COPULAS):
                return True
            if not between and first == last == 1:  # side by side: two single words only
                return True
    return False


_PHRASE = 3  # words in a role at most ("the auth service")


def one_word_swapped(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The same topic words in the same order but one, replaced by another word
    ("commutes to work by bus" -> "... by car"): the statement changed its object.

    Reworded sentences (other words, another order: "moved" / "relocated to") are
    left to the other kinds; an inflection ("deploy" / "deployed") is no change;
    fewer than four topic words ("Frank likes the office" / "enjoys") say too
    little to tell a new object from a synonym. English words only.
    """
    if len(a) != len(b) or len(a) < 4:  # shorter: too little context to tell
        return False
    swapped = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(swapped) != 1:
        return False
    x, y = swapped[0]
    if has_han(x) or has_han(y):  # one character of a Chinese word, not a word
        return False
    shared = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), len(x))
    return min(shared, len(y)) < min(4, len(x), len(y))
