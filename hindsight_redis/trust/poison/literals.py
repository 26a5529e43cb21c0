"""The words a pattern cannot match without: a test run before the pattern, much cheaper.

A signal's pattern costs microseconds a text even when it finds nothing (tens for the
largest), and most texts have none of its words. ``required`` reads a pattern's parsed
form (``re._parser``) and finds literals at least one of which every match contains
("ignore all previous instructions" needs "ignore" or "disregard" or ...); a pattern
it cannot reduce (a match made of classes alone, an optional part only) gets no test
and is always searched. ``LiteralTest`` holds the literals and says whether a text
(``fold``-ed as the literals are) may hold a match.

Soundness, under ``re.IGNORECASE`` too: ``fold`` maps each character the way the
regex engine compares them (lower-cased, the engine's equivalences such as ``ſ``/``s``
made one), the same on the literals and on the text, so a match found in a text is,
folded, a substring of the folded text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import product
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_MAX_EXACT = 64
"""The most strings a part's exact forms may number before it is no longer spelled out."""
_MAX_CLASS = 8
"""The largest character class spelled out as its characters ("[:：]")."""
_MAX_REGEX_TEST = 6
"""Up to this many literals are tested with ``in``; more, with one alternation."""
# Characters the regex engine treats as one letter under IGNORECASE although their
# lower-case forms differ ("ı" and "i", "ſ" and "s", "σ" and "ς"...): each made the first.
# Equivalence classes from CPython's re._casefix (3.11), which has the full table.
_EQUIVALENT: dict[int, str] = {}
try:
    from re._casefix import _EXTRA_CASES  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - a Python without it: IGNORECASE patterns unreduced
    _EXTRA_CASES = None
if _EXTRA_CASES is not None:
    for _char, _others in _EXTRA_CASES.items():
        _first = min(_char, *_others)
        for _member in (_char, *_others):
            _EQUIVALENT[_member] = chr(_first)
_EMPTY: frozenset[str] = frozenset([""])
_CAPITAL_DOTTED_I = {0x130: "i"}  # "İ".lower() is two characters; the engine reads "i"


def fold(text: str) -> str:
    """``text`` with each character as the regex engine compares it under IGNORECASE (for
    ASCII: ``text.lower()``)."""
    if text.isascii():
        return text.lower()
    return text.translate(_CAPITAL_DOTTED_I).lower().translate(_EQUIVALENT)


@dataclass(frozen=True, slots=True)
class LiteralTest:
    """Literals (folded) at least one of which every match of a pattern contains."""

    literals: tuple[str, ...]
    alternation: re.Pattern[str] | None = None
    """The literals as one pattern, when there are many (one search, not many ``in``)."""

    def may_match(self, folded: str) -> bool:
        """Whether ``folded`` (a text through ``fold``) holds one of the literals."""
        if self.alternation is not None:
            return self.alternation.search(folded) is not None
        return any(map(folded.__contains__, self.literals))  # no generator: faster


_KNOWN: dict[int, tuple[re.Pattern[str], Callable[[str], bool] | None]] = {}
"""``LiteralTest.may_match`` of each pattern asked about, by ``id`` (derived when first
asked: deriving them all would cost importing a scan 150 ms; a lookup costs 0.1 us)."""


def worth_searching(pattern: re.Pattern[str], folded: str) -> bool:
    """Whether ``pattern`` may match a text, ``folded`` (``fold``): False only when the text
    lacks every literal a match needs (the pattern then need not be searched)."""
    known = _KNOWN.get(id(pattern))
    if known is None or known[0] is not pattern:
        test = literal_test(pattern)
        known = _KNOWN[id(pattern)] = (pattern, None if test is None else test.may_match)
    may_match = known[1]
    return may_match is None or may_match(folded)


def prepare(patterns: Iterable[re.Pattern[str]]) -> None:
    """Derive the tests of ``patterns`` now, not when a text first asks for each
    (``worth_searching`` derives them: asked here of no text)."""
    for pattern in patterns:
        worth_searching(pattern, "")


def literal_test(pattern: re.Pattern[str]) -> LiteralTest | None:
    """The ``LiteralTest`` of ``pattern``, or None when it cannot be reduced (search it)."""
    found = required(pattern)
    if found is None:
        return None
    literals = tuple(sorted(found, key=_longest_first))
    if len(literals) <= _MAX_REGEX_TEST:
        return LiteralTest(literals)
    return LiteralTest(literals, one_pattern(literals))


def _longest_first(literal: str) -> tuple[int, str]:
    return -len(literal), literal


def one_pattern(literals: Iterable[str]) -> re.Pattern[str]:
    """A pattern finding any of ``literals`` (not all where they overlap: for a presence
    test), factored by their first characters: cheaper than their plain alternation."""
    return re.compile(_trie(list(literals)))


def _trie(literals: list[str]) -> str:
    """``literals`` as one pattern, factored by their first characters ("ab|ac" as
    "a(?:b|c)"): the engine tries fewer alternatives at each place. A literal that begins
    another ends the branch (presence is all that is asked)."""
    heads: dict[str, list[str]] = {}
    for literal in sorted(set(literals)):
        heads.setdefault(literal[:1], []).append(literal[1:])
    if "" in heads:  # the empty literal: found anywhere
        return ""
    branches = []
    for head, tails in heads.items():
        rest = "" if "" in tails else _trie(tails)
        branches.append(re.escape(head) + rest)
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


def required(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Folded literals at least one of which every match of ``pattern`` contains; None when
    there are none to be sure of (the pattern is then always searched)."""
    if not isinstance(pattern.pattern, str) or pattern.flags & re.LOCALE:
        return None
    if _EXTRA_CASES is None and pattern.flags & re.IGNORECASE:  # pragma: no cover
        return None  # the engine's odd case pairs unknown: folding may miss a match
    try:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    except (re.error, RecursionError, ValueError):  # pragma: no cover - compiled already
        return None
    return _Reduction.of_sequence(list(parsed)).needed


@dataclass(frozen=True, slots=True)
class _Reduction:
    """What a part of a pattern says of its matches: ``exact``, every string it can match
    (when few: None otherwise), and ``needed``, literals one of which each match holds."""

    exact: frozenset[str] | None
    needed: frozenset[str] | None

    @staticmethod
    def of_sequence(items: list[tuple[Any, Any]]) -> _Reduction:
        """The reduction of parts in a row: runs of exact parts joined into longer literals,
        the best of every run's and every other part's literals kept."""
        choices: list[frozenset[str]] = []
        run: frozenset[str] = _EMPTY
        whole: frozenset[str] | None = _EMPTY
        for op, av in items:
            part = _Reduction.of_item(op, av)
            if part.needed is not None:
                choices.append(part.needed)
            if part.exact is None:
                _keep_run(run, choices)
                run, whole = _EMPTY, None
                continue
            joined = _join(run, part.exact)
            if joined is None:
                _keep_run(run, choices)
                joined = part.exact
            run = joined
            whole = None if whole is None else _join(whole, part.exact)
        _keep_run(run, choices)
        return _Reduction(whole, _best(choices))

    @staticmethod
    def of_item(op: Any, av: Any) -> _Reduction:
        """The reduction of one parsed part."""
        if op is sre.LITERAL:
            return _exact(frozenset([fold(chr(av))]))
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return _exact(frozenset([""]))  # zero-width: adds nothing to the match
        if op is sre.SUBPATTERN:
            return _Reduction.of_sequence(list(av[-1]))
        if op is sre.ATOMIC_GROUP:
            return _Reduction.of_sequence(list(av))
        if op is sre.BRANCH:
            return _branches([_Reduction.of_sequence(list(b)) for b in av[1]])
        if op is sre.IN:
            return _class(av)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, body = av
            inner = _Reduction.of_sequence(list(body))
            if low == 0:
                return _Reduction(frozenset([""]) if high == 0 else None, None)
            exact = inner.exact if low == high == 1 else None
            return _Reduction(exact, inner.needed)
        return _Reduction(None, None)  # any character, a class by category, a backreference


def _exact(strings: frozenset[str]) -> _Reduction:
    return _Reduction(strings, strings if all(strings) else None)


def _branches(parts: list[_Reduction]) -> _Reduction:
    """Alternatives: every one's literals together (none known when one has none)."""
    exact: frozenset[str] | None = frozenset()
    needed: frozenset[str] | None = frozenset()
    for part in parts:
        exact = None if exact is None or part.exact is None else exact | part.exact
        own = part.needed
        if own is None and part.exact is not None and all(part.exact):
            own = part.exact
        needed = None if needed is None or own is None else needed | own
    if exact is not None and len(exact) > _MAX_EXACT:
        exact = None
    if exact is not None and all(exact) and (needed is None or _score(exact) > _score(needed)):
        needed = exact
    return _Reduction(exact, needed)


def _class(items: list[tuple[Any, Any]]) -> _Reduction:
    """A character class: its characters, when it is a few literals and ranges."""
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(fold(chr(av)))
        elif op is sre.RANGE and av[1] - av[0] < _MAX_CLASS:
            chars.update(fold(chr(c)) for c in range(av[0], av[1] + 1))
        else:  # a negation, a category (\w, \s), a wide range
            return _Reduction(None, None)
    if len(chars) > _MAX_CLASS:
        return _Reduction(None, None)
    return _exact(frozenset(chars))


def _join(left: frozenset[str] | None, right: frozenset[str]) -> frozenset[str] | None:
    if left is None or len(left) * len(right) > _MAX_EXACT:
        return None
    return frozenset(a + b for a, b in product(left, right))


def _keep_run(run: frozenset[str], choices: list[frozenset[str]]) -> None:
    if all(run):
        choices.append(run)


def _score(literals: frozenset[str]) -> tuple[int, int, int]:
    """How good a set of literals is as a test: its shortest literal long (few texts hold
    it, up to a word's head), then few literals (a cheap test), then longer still."""
    shortest = min(map(len, literals))
    return min(shortest, 5), -len(literals), shortest


def _best(choices: list[frozenset[str]]) -> frozenset[str] | None:
    return max(choices, key=_score) if choices else None
