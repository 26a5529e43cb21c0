"""What kind of thing a question asks for, and whether a memory names something.

Pure module: no I/O. "What books has Tim read?", "Which US cities has John
been to?" and "What kind of interests do Joanna and Nate share?" ask for
several things of one kind, told over several conversations: ``asked_kind``
reads the kind ("books", "US cities", "interests"). Such a question lists
what one person did or owns, so their own turns weigh more than for other
questions (the speaker re-ranker), and when the kind is one whose members
have names ("books", "cities", "movies": ``NAMED_KINDS``) the answers name
them: "I just watched "Little Women"", "I was in Chicago". ``names_something``
tells such a memory: a title in quotes, or a capitalized word inside a sentence
that is not a person the question names, the speaker, a greeting's addressee
or a day or month. On LoCoMo, 32% of the turns that answer list questions name
something, against 12% of all turns.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from hindsight_redis.language.calendar import MONTHS, WEEKDAYS
from hindsight_redis.language.speaker import speaker_label, strip_speaker_label

_WORD = r"[A-Za-z][\w'+/-]*"
_KIND = rf"((?:{_WORD}\s+){{0,2}}[a-z][a-z'-]*)"
_AUX = r"(?i:has|have|does|do|did|is|are|was|were)\b"
_ASKED = (
    # "What (kind of) board games has Nate played?"
    re.compile(rf"^\s*(?i:what|which)\s+(?:(?i:kinds?|types?|sorts?)\s+of\s+)?{_KIND}\s+{_AUX}"),
    # "What are Joanna's hobbies?", "What are the skills that Nate has taught?"
    re.compile(
        rf"^\s*(?i:what)\s+(?:are|were)\s+(?:some\s+(?:of\s+)?)?(?:the\s+)?"
        rf"(?:[A-Z][\w-]*(?:'s|’s|s'|s’)\s+)?{_KIND}(?=\s*(?:\?|$|\s(?:that|which|with|for|of)\b))"
    ),
    # "How many tournaments has Nate won?", "How many times has John injured his ankle?"
    re.compile(rf"^\s*(?i:how)\s+many\s+{_KIND}\s+{_AUX}"),
)
_WHERE = re.compile(r"^\s*(?i:where)\s+(?:has|have)\b")  # "Where has Melanie camped?"
_THINGS = re.compile(r"^\s*(?i:what)\s+(?:has|have)\s+[A-Z]")  # "What has John cooked?"
_TIME_UNITS = frozenset(
    {"years", "months", "weeks", "days", "hours", "minutes", "seconds", "decades", "weekends"}
)
_AUXILIARIES = frozenset({"did", "does", "do", "is", "was", "are", "were", "has", "have", "could"})
_IRREGULAR_PLURALS = frozenset({"people", "children", "men", "women", "series", "media"})
NAMED_KINDS = frozenset(
    {
        # works, and who makes them
        *("book", "novel", "movie", "film", "show", "series", "song", "album", "game"),
        *("podcast", "magazine", "app", "character", "band", "artist", "musician"),
        *("singer", "author", "writer", "player", "team", "club"),
        # places
        *("city", "country", "state", "place", "location", "destination", "restaurant"),
        *("park", "museum", "university", "school", "mountain", "island"),
        # makers and other named things
        *("company", "brand", "store", "shop", "language", "pet", "holiday", "name"),
    }
)
"""Kinds whose members have names or titles (singular; a plural asks the same)."""


@dataclass(frozen=True, slots=True)
class AskedKind:
    """The kind a question asks for: its words, whether it asks for several (``plural``)
    and whether its members have names (``named``)."""

    words: str
    plural: bool
    named: bool


def asked_kind(question: str) -> AskedKind | None:
    """The kind ``question`` asks for ("What board games has Nate played?" -> "board
    games", plural, named); None when it asks for no kind ("What did Nate do?", "When...")."""
    if _WHERE.match(question):
        return AskedKind("places", plural=True, named=True)
    if _THINGS.match(question):
        return AskedKind("things", plural=True, named=False)
    match = next(filter(None, (pattern.match(question) for pattern in _ASKED)), None)
    if match is None:
        return None
    words = match.group(1)
    head = words.rsplit(None, 1)[-1].lower()
    if words.split()[0].lower() in _AUXILIARIES or head in _TIME_UNITS:
        return None
    plural = head in _IRREGULAR_PLURALS or (
        head.endswith("s") and not head.endswith(("ss", "us", "is"))
    )
    forms = {head, head.removesuffix("s"), head.removesuffix("es")}
    if head.endswith("ies"):
        forms.add(head[:-3] + "y")  # cities -> city
    return AskedKind(words, plural, not forms.isdisjoint(NAMED_KINDS))


_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,80})[\"”]")
_INNER_NAME = re.compile(
    r"(?<=[a-z0-9,;:)]\s)([A-Z][\w'’-]*(?:\s+(?:of|the|and|de|[A-Z][\w'’-]*))*)"
    r"(?![\w'’-])"
)
_GREETING = re.compile(r"(?i:hey|hi|hello|thanks|thank you|congrats|bye|dear|yo),?\s*$")
_CALENDAR = frozenset(name.capitalize() for name in (*MONTHS, *WEEKDAYS))
_PRONOUNS = frozenset({"I", "I'm", "I've", "I'll", "I'd", "I’m", "I’ve", "I’ll", "I’d"})


def names_something(memory: str, people: Collection[str] = ()) -> bool:
    """Whether ``memory`` names something: a title in quotes, or a capitalized word
    inside a sentence that is none of ``people`` (the names a question gives), the
    memory's speaker, an addressee ("Thanks, Nate!"), a day or a month, or "I"."""
    if _QUOTED.search(memory):
        return True
    speaker = speaker_label(memory)
    text = strip_speaker_label(memory)
    for match in _INNER_NAME.finditer(text):
        first = match.group(1).split()[0].removesuffix("'s").removesuffix("’s")
        if first in _PRONOUNS or first in _CALENDAR or first in people or first == speaker:
            continue
        before, after = text[: match.start()], text[match.end() : match.end() + 1]
        addressed = _GREETING.search(before) is not None or before.endswith(", ")
        if addressed and after in {"", ",", ".", "!", "?"}:
            continue  # an addressee: "Thanks, Nate." / "Hey Joanna,"
        return True
    return False
