"""Dates and relative times named in a text, as ranges of unix seconds.

Pure module: no I/O. ``time_range(query, now)`` finds explicit dates ("on 8 May
2023", "in May", "2023", "2023-05-08", "2023年5月8日") and relative times
("yesterday", "last week", "two months ago", "去年", "上周", "3天前", "gestern",
"la semaine dernière", "el mes pasado") relative to ``now``, and returns the span
they cover; ``parse_timestamp`` reads the ``occurred_at`` a person types (unix
seconds or an ISO 8601 date or datetime).

Calendar units are those of ``tz`` (UTC by default): a day runs from midnight
to midnight, a week from Monday. A date without a year is its latest
occurrence not after ``now``. A month name counts only where it reads as a
date (with a day or a year, or after "in", "since", "last"...): "May I ask"
names no date.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from hindsight_redis.core.text import has_han
from hindsight_redis.language.calendar import (
    AMBIGUOUS_MONTHS,
    HAN_DIGITS,
    MONTH_ABBREVIATIONS,
    MONTH_NUMBERS,
    alternation,
)

Unit = str  # "day", "week", "month" or "year"

_ALL_MONTHS = {**MONTH_NUMBERS, **MONTH_ABBREVIATIONS}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2,
    "few": 3, "several": 3, "un": 1, "une": 1, "deux": 2, "trois": 3, "uno": 1, "una": 1,
    "dos": 2, "tres": 3, "einem": 1, "einer": 1, "zwei": 2, "drei": 3,
}  # fmt: skip
MONTH_NAMES = frozenset(_ALL_MONTHS)
"""Month names and abbreviations (English, German, French, Spanish)."""
NUMBER_WORDS = frozenset(_NUMBERS)
"""Small counts written as words ("two", "a couple", "drei")."""
_STRONG_CONTEXT = frozenset(
    {
        "in",
        "since",
        "during",
        "until",
        "early",
        "late",
        "mid",
        "im",
        "seit",
        "en",
        "depuis",
        "desde",
        "durante",
    }
)
_UNITS = {
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month",
    "months": "month", "year": "year", "years": "year",
    "tag": "day", "tagen": "day", "woche": "week", "wochen": "week", "monat": "month",
    "monaten": "month", "jahr": "year", "jahren": "year",
    "jour": "day", "jours": "day", "semaine": "week", "semaines": "week", "mois": "month",
    "an": "year", "ans": "year", "année": "year", "années": "year",
    "día": "day", "días": "day", "dia": "day", "dias": "day", "semana": "week",
    "semanas": "week", "mes": "month", "meses": "month", "año": "year", "años": "year",
    "天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week",
    "个礼拜": "week", "个月": "month", "月": "month", "年": "year",
}  # fmt: skip
# Fixed phrases: (unit, offset from the unit holding ``now``).
_PHRASES = {
    "the day before yesterday": ("day", -2), "yesterday": ("day", -1), "today": ("day", 0),
    "tonight": ("day", 0), "this morning": ("day", 0), "last night": ("day", -1),
    "last week": ("week", -1), "past week": ("week", -1), "previous week": ("week", -1),
    "last weekend": ("week", -1), "this week": ("week", 0), "last month": ("month", -1),
    "previous month": ("month", -1), "this month": ("month", 0), "last year": ("year", -1),
    "previous year": ("year", -1), "this year": ("year", 0),
    "vorgestern": ("day", -2), "gestern": ("day", -1), "heute": ("day", 0),
    "letzte woche": ("week", -1), "vorige woche": ("week", -1), "diese woche": ("week", 0),
    "letzten monat": ("month", -1), "letzter monat": ("month", -1),
    "vorigen monat": ("month", -1), "letztes jahr": ("year", -1), "voriges jahr": ("year", -1),
    "letzten jahr": ("year", -1), "dieses jahr": ("year", 0),
    "avant-hier": ("day", -2), "aujourd'hui": ("day", 0),  # not "hier": German "here"
    "la semaine dernière": ("week", -1), "cette semaine": ("week", 0),
    "le mois dernier": ("month", -1), "ce mois-ci": ("month", 0),
    "l'année dernière": ("year", -1), "l'an dernier": ("year", -1),
    "cette année": ("year", 0),
    "anteayer": ("day", -2), "ayer": ("day", -1), "hoy": ("day", 0),
    "la semana pasada": ("week", -1), "esta semana": ("week", 0),
    "el mes pasado": ("month", -1), "este mes": ("month", 0), "el año pasado": ("year", -1),
    "este año": ("year", 0),
    "前天": ("day", -2), "昨天": ("day", -1), "昨日": ("day", -1), "昨晚": ("day", -1),
    "今天": ("day", 0), "今日": ("day", 0), "今晚": ("day", 0), "上周": ("week", -1),
    "上星期": ("week", -1), "上个星期": ("week", -1), "上礼拜": ("week", -1),
    "上个礼拜": ("week", -1), "本周": ("week", 0), "这周": ("week", 0),
    "这个星期": ("week", 0), "上个月": ("month", -1), "上月": ("month", -1),
    "本月": ("month", 0), "这个月": ("month", 0), "去年": ("year", -1), "前年": ("year", -2),
    "今年": ("year", 0),
}  # fmt: skip
RELATIVE_PHRASES = frozenset(_PHRASES)
"""Fixed relative times ("yesterday", "last week", "gestern", "去年"...), lower case."""
# Word edges (a Han phrase needs none); a possessive "'s" may follow ("yesterday's").
_B, _E = r"(?<![\w'-])", r"(?![\w-])(?!'(?!s\b))"
_HAN_NUM = "[〇零一二两三四五六七八九十]+"
_NUM = rf"(?:\d{{1,3}}|{_HAN_NUM})"
_MONTH = "(?P<month>" + alternation(MONTH_NUMBERS) + ")"
_ANY_MONTH = "(?P<month>" + alternation(_ALL_MONTHS) + ")"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th|er|º|\.)?"
_YEAR = r"(?P<year>(?:1[89]|2[01])\d{2})"
_CONTEXT = (
    r"(?:in|on|since|during|last|this|next|early|late|mid|of|until|before|after|between|"
    r"from|and|to|by|im|seit|"
    r"letzten|en|au|depuis|desde|durante)"
)


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A span of time a text names: ``start`` (inclusive) to ``end`` (exclusive), unix
    seconds; ``text``: the words that named it."""

    start: float
    end: float
    text: str

    def __contains__(self, seconds: object) -> bool:
        return isinstance(seconds, int | float) and self.start <= seconds < self.end


def _number(text: str) -> int:
    """A count or day written in digits, English words or Han numerals (up to 99)."""
    text = text.lower()
    if text.isdigit():
        return int(text)
    if text in _NUMBERS:
        return _NUMBERS[text]
    tens, _, ones = text.partition("十")
    if "十" not in text:
        return int("".join(str(HAN_DIGITS[c]) for c in text))
    return (HAN_DIGITS.get(tens, 1) if tens else 1) * 10 + (HAN_DIGITS[ones] if ones else 0)


def _unit_start(day: date, unit: Unit, offset: int) -> tuple[date, date]:
    """The calendar ``unit`` ``offset`` units from the one holding ``day``: first and next day."""
    if unit == "day":
        first = day + timedelta(days=offset)
        return first, first + timedelta(days=1)
    if unit == "week":
        first = day - timedelta(days=day.weekday()) + timedelta(weeks=offset)
        return first, first + timedelta(weeks=1)
    if unit == "month":
        index = day.year * 12 + day.month - 1 + offset
        first = date(index // 12, index % 12 + 1, 1)
        after = index + 1
        return first, date(after // 12, after % 12 + 1, 1)
    first = date(day.year + offset, 1, 1)
    return first, date(first.year + 1, 1, 1)


def _latest(today: date, month: int, day: int | None) -> int:
    """The year of the latest ``month`` (and ``day``) not after ``today``."""
    if (month, day or 1) <= (today.month, today.day):
        return today.year
    return today.year - 1


Found = tuple[date, date]
Reader = Callable[[dict[str, str | None], date, date], Found | None]
"""Reads a match: its groups, today, and the day a date without a year is latest by
(today, or the end of the year the text names: "from March to June 2023")."""


def _calendar(year: int, month: int, day: int | None) -> Found | None:
    try:
        first = date(year, month, day or 1)
    except ValueError:  # 30 February
        return None
    if day is not None:
        return first, first + timedelta(days=1)
    return _unit_start(first, "month", 0)


def _explicit(groups: dict[str, str | None], today: date, anchor: date) -> Found | None:
    """A date: its day when it has one, else its month, else its year.

    An ambiguous English month word in lower case ("may") is a date only with a
    year, or after a word such as "in" (``_STRONG_CONTEXT``).
    """
    text = groups.get("month") or ""
    if not text:
        return _year(groups, today, anchor)
    context = (groups.get("ctx") or "").lower()
    if text in AMBIGUOUS_MONTHS and not groups.get("year") and context not in _STRONG_CONTEXT:
        return None
    raw = text.lower()
    month = _ALL_MONTHS.get(raw) or (_number(raw) if raw else 0)
    day = _number(groups.get("day") or "") if groups.get("day") else None
    if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
        return None
    year = _number(groups.get("year") or "") if groups.get("year") else _latest(anchor, month, day)
    return _calendar(year, month, day)


def _year(groups: dict[str, str | None], today: date, anchor: date) -> Found | None:
    return _unit_start(date(_number(groups["year"] or ""), 1, 1), "year", 0)


def _ago(groups: dict[str, str | None], today: date, anchor: date) -> Found | None:
    count = _number(groups["count"] or "")
    unit = _UNITS[(groups["unit"] or "").lower()]
    return _unit_start(today, unit, -count) if 0 < count <= 1000 else None


def _phrase(groups: dict[str, str | None], today: date, anchor: date) -> Found | None:
    unit, offset = _PHRASES[(groups["phrase"] or "").lower()]
    return _unit_start(today, unit, offset)


_HAN_YEAR = r"(?P<year>\d{4}|[〇零一二三四五六七八九]{4})年"
_HAN_MONTH = r"(?P<month>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月份?"
_HAN_DAY = (
    r"(?P<day>3[01]|[12]\d|0?[1-9]|[一二]?十[一二三四五六七八九]?|三十一?|[一二三四五六七八九])"
    "[日号]"
)
_EN_UNITS = "|".join(sorted((u for u in _UNITS if not has_han(u)), key=len, reverse=True))
_EN_COUNT = r"(?P<count>\d{1,3}|" + "|".join(_NUMBERS) + ")"
_HAN = "[\u4e00-\u9fff]"  # a Han phrase may touch Han words on either side
_PHRASE_ALT = "|".join(sorted(map(re.escape, _PHRASES), key=len, reverse=True))
_PATTERNS: tuple[tuple[re.Pattern[str], Reader], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reader)
    for pattern, reader in (
        (rf"{_B}(?P<year>\d{{4}})-(?P<month>\d{{1,2}})(?:-(?P<day>\d{{1,2}}))?{_E}", _explicit),
        (rf"{_HAN_YEAR}(?:{_HAN_MONTH}(?:{_HAN_DAY})?)?", _explicit),
        (rf"{_HAN_MONTH}(?:{_HAN_DAY})?", _explicit),
        (
            rf"{_B}{_DAY}\s+(?:of\s+|de\s+)?{_ANY_MONTH}\.?,?(?:\s+(?:de\s+)?{_YEAR})?{_E}",
            _explicit,
        ),
        (rf"{_B}{_ANY_MONTH}\.?\s+{_DAY}(?:,?\s+{_YEAR})?{_E}", _explicit),
        (rf"{_B}{_ANY_MONTH}\.?,?\s+(?:of\s+|de\s+)?{_YEAR}{_E}", _explicit),
        (rf"{_B}(?P<ctx>{_CONTEXT})\s+(?:the\s+)?(?:month\s+of\s+)?{_MONTH}{_E}", _explicit),
        (rf"{_B}{_EN_COUNT}\s+(?:of\s+)?(?P<unit>{_EN_UNITS})\s+ago{_E}", _ago),
        (rf"{_B}(?:vor|il y a|hace)\s+{_EN_COUNT}\s+(?P<unit>{_EN_UNITS}){_E}", _ago),
        (rf"(?P<count>{_NUM})\s*(?P<unit>天|日|周|个?星期|个?礼拜|个月|年)[以之]?前", _ago),
        (rf"(?:{_B}|(?<={_HAN}))(?P<phrase>{_PHRASE_ALT})(?:{_E}|(?={_HAN}))", _phrase),
        (rf"{_B}{_YEAR}{_E}", _year),
    )
)

_A_YEAR = re.compile(r"(?<!\d)(?:1[89]|2[01])\d{2}(?!\d)")


def time_ranges(text: str, now: float, tz: tzinfo = UTC) -> list[TimeRange]:
    """Every date or relative time in ``text`` (relative to ``now``), in text order.

    Patterns are tried most specific first; a later one never matches inside an
    earlier one's words ("May 2023" is one month, not a month and a year).
    """
    today = datetime.fromtimestamp(now, tz).date()
    named = _A_YEAR.search(text)
    anchor = min(today, date(int(named.group(0)), 12, 31)) if named else today
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, TimeRange]] = []
    for pattern, reader in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            try:
                span = reader(match.groupdict(), today, anchor)
            except (KeyError, ValueError, OverflowError):
                span = None
            if span is None:
                continue
            taken.append((start, end))
            first, after = (datetime.combine(d, datetime.min.time(), tz).timestamp() for d in span)
            found.append((start, TimeRange(first, after, match.group(0))))
    return [r for _, r in sorted(found, key=lambda pair: pair[0])]


def time_range(text: str, now: float, tz: tzinfo = UTC) -> TimeRange | None:
    """The span of time ``text`` names (from its first date to its last), or None."""
    found = time_ranges(text, now, tz)
    if not found:
        return None
    words = " … ".join(r.text for r in found)
    return TimeRange(min(r.start for r in found), max(r.end for r in found), words)


def parse_timestamp(text: str, tz: tzinfo = UTC) -> float:
    """Unix seconds from ``text``: a number of seconds, or an ISO 8601 date or datetime
    (one without an offset is in ``tz``). Raises ``ValueError`` otherwise."""
    value = text.strip()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is neither unix seconds nor an ISO date (2023-05-08, "
            "2023-05-08T13:56:00+02:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.timestamp()
