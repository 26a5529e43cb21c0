"""What a signal is: a pattern, its kind and weight, and the cheap test run before it.

A signal is a pattern over the normalised text (``trust.poisoning.normalize``),
its kind, and a weight (how sure a match alone makes it: ``STRONG`` holds on its
own, two ``MEDIUM`` ones do), or a ``grade`` that weighs the match by what it
says. Its ``heads`` (the first letters of words a match must contain) let a
scan try only the patterns that can match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["override", "markup", "reader", "exfiltration", "authority", "covert", "harm"]
STRONG = 0.9
MEDIUM = 0.45
SLIGHT = 0.3

Grade = Callable[[re.Match[str], str], float]


@dataclass(frozen=True, slots=True)
class Signal:
    """One pattern, what it means, and how much a match weighs.

    ``negatable``: a negation just before the match ("never ignore the safety
    rules") cancels it. ``grade``: the weight of a match, read from the match
    and the text (``weight`` when None); 0 discards the match.
    """

    name: str
    kind: Kind
    weight: float
    pattern: re.Pattern[str]
    negatable: bool = False
    grade: Grade | None = None
    heads: tuple[frozenset[str], ...] = ()
    """Groups of word heads (``word_heads``): a match has one of each group."""
    han: tuple[tuple[str, ...], ...] = ()
    """For a match in Chinese: groups of substrings, one of each in a match."""

    def ready(self, text_heads: frozenset[str], lower: str, has_han: bool) -> bool:
        """Whether the pattern can match a text of these heads (a cheap test first: the
        patterns are tried only where they can match, which makes a scan ten times faster).
        ``lower``: the normalised text, lower-cased."""
        if self.heads:
            for group in self.heads:  # a loop: faster than all() over a generator
                if group.isdisjoint(text_heads):
                    break
            else:
                return True
        if self.han and has_han and all(any(s in lower for s in g) for g in self.han):
            return True
        return not self.heads and not self.han


HEAD_SYMBOLS = "<[#@{$!"
"""Characters that count as heads of their own (markup, addresses, templates)."""
_WORD_HEAD = re.compile(r"([a-z0-9]{1,4})[a-z0-9]*")
"""A Latin word, its first four letters captured."""


def word_heads(lower: str) -> frozenset[str]:
    """The first four letters of each Latin word of ``lower`` (a lower-cased text), and the
    ``HEAD_SYMBOLS`` it holds."""
    found = set(_WORD_HEAD.findall(lower))
    found.update(c for c in HEAD_SYMBOLS if c in lower)
    return frozenset(found)


def heads(spec: str) -> tuple[frozenset[str], ...]:
    """``Signal.heads`` from ``"a b & c d"``: (a or b) and (c or d)."""
    return tuple(frozenset(group.split()) for group in spec.split("&"))


def han(spec: str) -> tuple[tuple[str, ...], ...]:
    """``Signal.han`` from ``"甲 乙 & 丙"``, as ``heads``."""
    return tuple(tuple(group.split()) for group in spec.split("&"))


def pattern(text: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    """``text`` compiled (case-insensitive unless told otherwise)."""
    return re.compile(text, flags)


def alternation(words: str) -> str:
    """Space-separated words as a regex alternation, longest first."""
    return "|".join(sorted(words.split(), key=len, reverse=True))


NEGATION = pattern(
    r"(?:\b(?:never|not|don't|dont|do not|doesn't|does not|must not|mustn't|should not|"
    r"shouldn't|cannot|can't|won't|will not|refuse to|avoid|no one should|nobody should)"
    r"\s+(?:ever\s+)?(?:to\s+)?|(?:不要|不能|不得|不可|不准|不许|别|切勿|禁止|严禁|绝不|决不|"
    r"永远不要|千万不要|从不|不应该?|避免))\s*$"
)
"""A negation ending just before a match: the text forbids what the pattern describes."""


AI_WORDS = (
    r"(?:ai|a\.i\.|artificial intelligence|ai assistants?|assistants?|ai agents?|agents?|"
    r"(?:large )?language models?|models?|llms?|chat ?bots?|bots?|copilots?|gpts?|chatgpt|"
    r"claude|gemini|machines?)"
)
"""Who reads a memory later: an assistant, an agent, a model (a pattern's alternation)."""


@dataclass(frozen=True, slots=True)
class Cue:
    """One piece of a move (``trust.poison.structure``): patterns, each with the cheap test
    run before it (a pattern costs a few microseconds a text even when it finds nothing).

    A part is a pattern, groups of word heads (``word_heads``: a match has one of each
    group; no group: tried on every text), and whether it holds characters outside ASCII
    (Chinese, accented words: then it is also tried on every text that has some)."""

    parts: tuple[tuple[re.Pattern[str], tuple[frozenset[str], ...], bool], ...]
    some: frozenset[str] = frozenset()
    """The heads of every part's first group: a text with none of them (and in ASCII) can
    match no part, found with one set test (most texts)."""
    always: bool = False
    """Some ASCII part has no heads."""

    def ready(self, text_heads: frozenset[str], ascii_only: bool) -> list[re.Pattern[str]]:
        """The patterns that can match a text of these heads."""
        if ascii_only and not self.always and self.some.isdisjoint(text_heads):
            return []
        found = []
        for pattern, groups, wide in self.parts:
            if wide and not ascii_only:
                found.append(pattern)
            elif not groups:
                if not wide:
                    found.append(pattern)
            else:
                for group in groups:  # a loop: faster than all() over a generator
                    if group.isdisjoint(text_heads):
                        break
                else:
                    found.append(pattern)
        return found


def may_match(text_heads: frozenset[str], ascii_only: bool, *cues: Cue) -> bool:
    """Whether any of ``cues`` can match a text of these heads (``Cue.some``)."""
    if not ascii_only:
        return True
    return any(c.always or not c.some.isdisjoint(text_heads) for c in cues)


def cue(*parts: str | tuple[str, str], heads: str = "") -> Cue:
    """A ``Cue`` matching any of ``parts`` (case already folded): a pattern tried where the
    text has the ``heads`` (as ``heads()``: "a b & c d", one of a, b and one of c, d), or
    a pair of a pattern and its own heads. A pattern written outside ASCII (Chinese, an
    accent, a dash) is also tried on every text that is not ASCII."""
    found = []
    for part in parts:
        text, own = part if isinstance(part, tuple) else (part, heads)
        groups = tuple(frozenset(g.split()) for g in own.split("&")) if own.strip() else ()
        found.append((re.compile(text), groups, not text.isascii()))
    some = frozenset().union(*(groups[0] for _, groups, _ in found if groups))
    CUE_PATTERNS.extend(pattern for pattern, _, _ in found)
    return Cue(tuple(found), some, any(not groups and not wide for _, groups, wide in found))


CUE_PATTERNS: list[re.Pattern[str]] = []
"""Every pattern of every ``cue`` built (``trust.poisoning.warm`` prepares their literal
tests ahead of a worker's first batch)."""
