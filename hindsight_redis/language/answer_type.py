"""What a question asks: a time (and the memories that tell one), or how things were.

Pure module: no I/O. "When did Caroline go to the support group?" is
answered by a memory that says when ("I went to a support group
yesterday"), and "how long has she painted?" by one that gives a span
("seven years now"). On LoCoMo, 79% of the turns that answer a temporal
question name a time or a span, against 15% of all turns; neither the
keyword leg nor the vectors know that a question wants one. ``asks_time``
tells the questions (English, Chinese, German, French, Spanish: the
languages of ``when``), ``tells_time`` the memories: a date, a weekday, a
part of the day, a relative time ("last Fri", "this past weekend", "two
weeks ago") or a span ("for 4 years", "since May"). The search's time boost
adds a small weight to such memories among the candidates of such questions.

``asks_about_the_past`` tells a question about how things were, or changed
("what was...", "before", "以前"): for it, the older of two contradicting
memories is as much an answer as the newer (the search's newer-first rule).
"""

from __future__ import annotations

import functools
import re

from hindsight_redis.core.text import has_han
from hindsight_redis.language.calendar import WEEKDAY_ABBREVIATIONS, WEEKDAYS, alternation
from hindsight_redis.language.when import MONTH_NAMES, NUMBER_WORDS, RELATIVE_PHRASES

_QUESTION = re.compile(
    r"(?:^|[\s,;:(\"'¿¡])(?:"
    r"when|since when|how long|how many (?:years|months|weeks|days|hours)|"
    r"what (?:date|day|month|year|time|week|weekend)|which (?:date|day|month|year|week)|"
    r"wann|seit wann|wie lange|an welchem tag|in welchem (?:jahr|monat)|"
    r"quand|depuis quand|combien de temps|quel jour|quelle (?:date|année)|en quelle année|"
    r"cuándo|cuando|desde cuándo|cuánto tiempo|qué día|qué fecha|en qué año"
    r")(?![\w-])",
    re.IGNORECASE,
)
_HAN_QUESTION = re.compile(
    r"什么时候|什么时间|何时|哪天|哪一天|哪年|哪一年|哪个月|几月|几号|几点|"
    r"(?:星期|礼拜|周)几|多久|多长时间|多少年"
)

_WEEKDAYS = alternation([*WEEKDAYS, *WEEKDAY_ABBREVIATIONS])
_UNITS = r"(?:second|minute|hour|day|night|week|weekend|month|year|decade|semester|season)s?"
_COUNT = (
    r"(?:\d{1,4}|a|an|a few|a couple of|couple of|few|several|"
    + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
    + ")"
)
_MONTH_NAMES = alternation(MONTH_NAMES)
# when.py's fixed phrases (all its languages), and what only a text that tells needs
_PHRASES = "|".join(
    sorted((re.escape(p) for p in RELATIVE_PHRASES if not has_han(p)), key=len, reverse=True)
)
_HAN_PHRASES = "|".join(sorted((p for p in RELATIVE_PHRASES if has_han(p)), key=len, reverse=True))
_TIME = re.compile(
    r"(?<![\w'-])(?:" + _PHRASES + r"|tomorrow|this (?:afternoon|evening)|"
    r"(?:last|this past|past|this|next|previous|earlier this|later this) "
    r"(?:" + _WEEKDAYS + r"|week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"semester|season|night|time)|"
    r"(?:on|every|last|this|next) (?:"
    + _WEEKDAYS
    + r")|"
    + _COUNT
    + r" "
    + _UNITS
    + r"(?: now| ago| back| later| earlier| before| after)?|"
    r"(?:for|since|over|in) (?:the (?:past|last) )?" + _COUNT + r" " + _UNITS + r"|"
    r"(?:since|in|during|early|late|mid|last|this|next|until|before|after) (?:"
    + _MONTH_NAMES
    + r")|"
    r"(?:19|20)\d{2}|"
    r"(?:the other|one) day|recently|lately|a while (?:ago|back)|"
    r"vor \w+ (?:tagen|wochen|monaten|jahren)|hier soir|il y a|hace \w+"
    r")(?![\w-])",
    re.IGNORECASE,
)
_HAN_NUMBER = r"[〇零一二两三四五六七八九十百半\d]+"
_HAN_TIME = re.compile(
    _HAN_PHRASES
    + r"|明天|"
    + _HAN_NUMBER
    + r"(?:年|个月|周|天|小时)(?:前|以来)?|星期[一二三四五六日天]|周[一二三四五六日]|"
    # a date, a clock time, a part of the day, a recurrence: 六月三十日, 5月20号, 十二点半
    + _HAN_NUMBER
    + r"月(?:"
    + _HAN_NUMBER
    + r"[日号])?|"
    + _HAN_NUMBER
    + r"[日号]|(?!一点)"  # 一点 alone is "a little"
    + _HAN_NUMBER
    + r"点(?:半|钟|"
    + _HAN_NUMBER
    + r"分?)?|"
    r"上午|下午|中午|晚上|早上|凌晨|傍晚|每(?:天|周|月|年)|[月年]底|[月年]初|周末"
)


def asks_time(query: str) -> bool:
    """Whether ``query`` asks for a time or a span ("when…", "how long…", "什么时候")."""
    return bool(_QUESTION.search(query) or _HAN_QUESTION.search(query))


@functools.lru_cache(maxsize=4096)
def tells_time(text: str) -> bool:
    """Whether ``text`` names a time or a span (a date, a relative time, a duration).

    Cached by text: searches ask it of the same memories again and again (a
    regex search over a memory costs about 20 us; a cache hit, a dict lookup).
    """
    return bool(_TIME.search(text) or _HAN_TIME.search(text))


# A question about the past, about a change, or about both versions: the
# contradiction is the answer, not a stale copy of it.
_PAST = re.compile(
    r"\b(?:was|were|did|had|used to|before|previous(?:ly)?|former(?:ly)?|original(?:ly)?|"
    r"earlier|at first|initially|ago|last (?:time|week|month|year)|"
    r"change[sd]?|history|ever|both)\b",
    re.IGNORECASE,
)
_PAST_ZH = re.compile(r"以前|之前|原来|曾经|当初|过去|上次|起初|本来|改成|变化|历史")


def asks_about_the_past(query: str) -> bool:
    """Whether a question is about how things were (or changed), not how they are now."""
    return bool(_PAST.search(query) or _PAST_ZH.search(query))
