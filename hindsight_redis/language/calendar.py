"""Month and weekday names, and Chinese digits: the tables the language rules share.

Pure module. ``when`` reads dates in four languages, ``answer_type`` tells
the texts that name a time, ``facts`` compares the months and weekdays two
texts state, and the write score counts a date as a sign of a fact: all of
them take the names from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
"""The English month names, in order."""
MONTH_NUMBERS: dict[str, int] = {
    **{name: n for n, name in enumerate(MONTHS, start=1)},
    "januar": 1, "jänner": 1, "februar": 2, "märz": 3, "mai": 5, "juni": 6, "juli": 7,
    "oktober": 10, "dezember": 12,
    "janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "juin": 6,
    "juillet": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
    "décembre": 12, "decembre": 12,
    "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7,
    "agosto": 8, "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11,
    "diciembre": 12,
}  # fmt: skip
"""Month names in English, German, French and Spanish (and their usual spellings
without accents), lower case, to their number."""
MONTH_ABBREVIATIONS: dict[str, int] = {
    **{name[:3]: n for n, name in enumerate(MONTHS, start=1) if name != "may"},
    "sept": 9,
}
"""English month abbreviations ("jan", "sept"...) to their number: dates only next to a
day or a year ("Mar 3", "Dec 2023")."""
AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar"})
"""English words that are month names only where they read as dates ("May I", "march on")."""
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
"""The English weekday names, Monday first."""
WEEKDAY_ABBREVIATIONS: dict[str, int] = {
    **{name[:3]: n for n, name in enumerate(WEEKDAYS)},
    "tues": 1,
    "thur": 3,
    "thurs": 3,
}
"""English weekday abbreviations ("mon", "tues", "thurs"...) to their index in ``WEEKDAYS``."""

HAN_DIGITS = {
    "〇": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
"""Chinese digits (two ways of writing zero and two, 二 and 两) to their value."""


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` (escaped), longest first."""
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))
