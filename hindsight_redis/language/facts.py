"""The checkable facts of a short text, and whether two texts disagree on them.

Pure module. ``facts_of`` pulls out what a near-duplicate must not change
without notice: numbers (versions, amounts), times of day, weekdays,
months, relative days (today, 明天), names of people and places, and
negation; the rest are its topic words. ``disagree`` says why two texts
about the same thing cannot both hold: a value of one kind in each text that
the other lacks (a substitution: Tuesday -> Thursday, Bob Smith -> Carol
Jones, 北京 -> 上海), a negation flip, or one topic word swapped for another
in the same sentence ("by bus" -> "by car"). A value only added (more
detail) is not a disagreement. English and Chinese.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hindsight_redis.core.text import HAN_CLASS, has_han, one_word_swapped, two_words_exchanged
from hindsight_redis.language import chinese_values as zh
from hindsight_redis.language.calendar import (
    AMBIGUOUS_MONTHS,
    MONTH_ABBREVIATIONS,
    MONTH_NUMBERS,
    MONTHS,
    WEEKDAY_ABBREVIATIONS,
    WEEKDAYS,
)
from hindsight_redis.language.speaker import strip_speaker_label
from hindsight_redis.language.stopwords import stopword_set

KINDS = ("number", "time", "weekday", "month", "day", "name")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Latin words and digits may touch Chinese characters ("在GitHub上", "早上7:30"), where
# \b sees no boundary: the edges of a word or number are spelled out instead.
_L, _R = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_CLOCK = re.compile(
    r"(?<![\d:])(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m(?![A-Za-z])\.?|(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])",
    re.IGNORECASE,
)
# 50万 = 500,000, 2亿 = 200,000,000, $12k = 12,000
_SCALED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(万|亿|k(?![A-Za-z]))")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ORDINAL = re.compile(r"(?<!\d)(\d+)(?:st|nd|rd|th)(?![A-Za-z])", re.IGNORECASE)
_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        _words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000"}
# English words that are values: weekdays, months, relative days, times of day, numbers...
_LEXICON: dict[str, tuple[str, str]] = {
    **{w: ("weekday", d) for d in WEEKDAYS for w in (d, d + "s")},
    # "tues", "thurs"; the three-letter ones are words too ("sat", "sun", "wed"): below
    **{w: ("weekday", WEEKDAYS[n]) for w, n in WEEKDAY_ABBREVIATIONS.items() if len(w) > 3},
    **{m: ("month", m) for m in MONTHS if m not in AMBIGUOUS_MONTHS},
    **{
        m: ("month", MONTHS[n - 1])
        for m, n in MONTH_ABBREVIATIONS.items()
        if m not in AMBIGUOUS_MONTHS
    },
    **{d: ("day", d) for d in ("today", "tomorrow", "yesterday", "tonight")},
    "noon": ("time", "12:00"),
    "midday": ("time", "12:00"),
    "midnight": ("time", "0:00"),
    **{w: ("number", n) for w, n in _NUMBER_WORDS.items()},
}
# ... and those that are values only when capitalised ("May 3", not "may"; "Sat", not "sat").
_CAPITALISED = {
    **{
        m: ("month", MONTHS[{**MONTH_NUMBERS, **MONTH_ABBREVIATIONS}[m] - 1])
        for m in AMBIGUOUS_MONTHS
    },
    **{w: ("weekday", WEEKDAYS[n]) for w, n in WEEKDAY_ABBREVIATIONS.items() if len(w) == 3},
}
_NEGATORS = frozenset(
    _words(
        "not no never cannot can't don't doesn't didn't isn't aren't wasn't weren't won't "
        "wouldn't shouldn't neither nor"
    )
)
_NEGATION_FILLERS = frozenset(
    _words("a an the be been being to any more longer really very so at all")
)
# A name right after one of these is one the text speaks to ("Hey Mel", "Thanks, Gina!").
_ADDRESSING = frozenset(
    _words(
        "hey hi hello thanks thank dear bye congrats congratulations sorry yo ok okay yes yeah wow"
    )
)
_ACTED_ON = frozenset(_LEXICON) | _NEGATORS  # lower-case words _english never keeps as they are
# ... as a lower-case token may spell them (either apostrophe).
_ACTED_ON_SPELLED = _ACTED_ON | {w.replace("'", "’") for w in _ACTED_ON}
_LATIN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
# A capitalised word or an acronym (a name of a person, place, product), possessive aside.
_PROPER = re.compile(rf"{_L}([A-Z][A-Za-z0-9]*)(?:['’]s)?{_R}")
_WORD = re.compile(rf"[{HAN_CLASS}]|[^\W\d_{HAN_CLASS}]+(?:['’][^\W\d_]+)?")
_WORD_WITHOUT_HAN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")  # _WORD, in text without Han
_DIGIT = re.compile(r"\d")  # in ASCII text, what str.isdigit finds
_AUXILIARIES = frozenset({"do", "does", "did", "is", "are", "was", "were", "will", "would", "be"})


@dataclass(frozen=True, slots=True)
class Facts:
    """What a text asserts that can be checked: values by kind, topic words, negation."""

    values: dict[str, frozenset[str]] = field(default_factory=dict)
    words: frozenset[str] = frozenset()
    negated: frozenset[str] = frozenset()
    sequence: tuple[str, ...] = ()  # the topic words in text order
    tokens: tuple[str, ...] = ()  # every word (Chinese: character) in order, values too, lower case


def _clock(hour: int, minute: int) -> str:
    return f"{hour % 24}:{minute:02d}"


Found = str | int | list[tuple[str, object]] | None


class _Reader:
    """Takes values out of a text one kind at a time, blanking what it took."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.values: dict[str, set[str]] = {kind: set() for kind in KINDS}

    def take(
        self, pattern: re.Pattern[str], kind: str, value: Callable[[re.Match[str]], Found]
    ) -> None:
        """Record ``value(match)`` as ``kind`` for each match (a list: ``(kind, value)``
        pairs) and blank the match; a match whose value is None stays in the text."""

        def keep(match: re.Match[str]) -> str:
            found = value(match)
            if found is None:
                return match[0]
            for item_kind, item in found if isinstance(found, list) else [(kind, found)]:
                self.values[item_kind].add(str(item))
            return " "

        self.text = pattern.sub(keep, self.text)


def _numbers(reader: _Reader) -> None:
    """Dates, clock times and numbers written with digits (any language)."""
    reader.take(
        _ISO_DATE,
        "number",
        lambda m: (
            [("number", int(m[1])), ("month", MONTHS[int(m[2]) - 1]), ("number", int(m[3]))]
            if 1 <= int(m[2]) <= 12
            else None
        ),
    )

    def clock(m: re.Match[str]) -> str:
        if m[3]:
            hour = int(m[1]) % 12 + (12 if m[3].lower() == "p" else 0)
            return _clock(hour, int(m[2] or 0))
        return _clock(int(m[4]), int(m[5]))

    reader.take(_CLOCK, "time", clock)
    reader.take(_ORDINAL, "number", lambda m: int(m[1]))
    reader.take(_SCALED, "number", _scaled)


def _english(reader: _Reader) -> frozenset[str]:
    """English words that are values, in one pass over the Latin words.

    Returns the negated words ("is not [allergic]", "[like]" of "dislikes");
    negators and the names a text addresses are blanked.
    """
    text, out, negated = reader.text, [], set()
    tokens = list(_LATIN.finditer(text))
    dislikes = "dislike" in text  # (in a lower-case word)
    last = 0
    for n, token in enumerate(tokens):
        word = token[0]
        if (
            word.islower()
            and word not in _ACTED_ON_SPELLED
            and not (dislikes and word.startswith("dislike"))
        ):
            continue  # most words: kept as they are
        low = word.lower()
        if "’" in low:
            low = low.replace("’", "'")
        upper = word[0].isupper()
        if not upper and low not in _ACTED_ON and not low.startswith("dislike"):
            continue
        found = _LEXICON.get(low) or (_CAPITALISED.get(low) if upper else None)
        if found is not None:
            reader.values[found[0]].add(found[1])
            keep = " "
        elif low in _NEGATORS:
            following = (t[0].lower() for t in tokens[n + 1 :])
            target = next((w for w in following if w not in _NEGATION_FILLERS), None)
            if target is not None:
                negated.add(_stem(target))
            keep = " "
        elif low.startswith("dislike"):
            negated.add("like")
            keep = "like"
        elif upper and n > 0 and _addressed(text, tokens[n - 1], token):
            keep = " "
        else:
            continue
        out += [text[last : token.start()], keep]
        last = token.end()
    if out:
        reader.text = "".join([*out, text[last:]])
    return frozenset(negated)


def _addressed(text: str, before: re.Match[str], name: re.Match[str]) -> bool:
    """A name spoken to: after "hey", "thanks"..., or as ", Name!" / ", Name." at the end."""
    between = text[before.end() : name.start()]
    if before[0].lower() in _ADDRESSING and between.strip(" ,!") == "":
        return True
    after = text[name.end() : name.end() + 2].strip()
    return between.endswith(", ") and (after[:1] in ("!", "?", ".") or after == "")


def _scaled(m: re.Match[str]) -> str:
    value = float(m[1]) * {"万": 1e4, "亿": 1e8}.get(m[2], 1e3)
    return str(int(value)) if value.is_integer() else str(value)


def _normal_number(token: str) -> str:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", token):
        return str(int(token.replace(",", "")))
    token = token.replace(",", ".")
    return str(int(token)) if token.isdigit() else token


def _chinese(reader: _Reader) -> None:
    reader.take(zh.WEEKDAY, "weekday", lambda m: "7" if m[1] in "日天7" else str(zh.number(m[1])))

    def clock(m: re.Match[str]) -> str:
        hour = zh.number(m[2])
        if m[1] in ("下午", "晚上") and hour < 12:
            hour += 12
        minute = 30 if m[3] == "半" else zh.number(m[3].rstrip("分")) if m[3] else 0
        return _clock(hour, minute)

    reader.take(zh.CLOCK, "time", clock)
    reader.take(zh.MONTH, "month", lambda m: MONTHS[(zh.number(m[1]) - 1) % 12])
    reader.take(zh.DATE, "number", lambda m: zh.number(m[1]))
    reader.take(zh.DAY, "day", lambda m: m[0])
    reader.take(zh.COUNT, "number", lambda m: zh.number(m[1]))
    reader.take(zh.NAME, "name", lambda m: m[1])
    reader.take(zh.PLACE, "name", lambda m: m[0])


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _starts_sentence(m: re.Match[str]) -> bool:
    """Whether only spaces separate the match from the text's start or from one of
    ``.!?;:`` or a line break before it."""
    before = m.string[: m.start()]
    stripped = before.rstrip()
    return not stripped or stripped[-1] in ".!?;:" or "\n" in before[len(stripped) :]


@functools.lru_cache(maxsize=4096)
def _name_like(word: str) -> bool:
    """Whether a capitalised word that starts a sentence is a name, not a common word.

    Decided by how English is written (tiktoken's ``cl100k_base``, ranked by
    frequency): for a name ("Bob", "Lisbon") the capitalised form is the more
    frequent token, for a common word ("Remember", "Deploys") the lower-case one.
    """
    from hindsight_redis.language.tokens import encoding

    enc = encoding()
    capital = enc.encode(" " + word[0].upper() + word[1:])
    lower = enc.encode(" " + word.lower())
    if len(capital) == 1 and len(lower) > 1:
        return True
    return capital[0] < lower[0] and len(capital) <= len(lower)


@functools.cache
def _not_topic() -> frozenset[str]:
    """The words that are no topic: stopwords, auxiliaries, Chinese function characters."""
    return stopword_set() | _AUXILIARIES | zh.FUNCTION_CHARS


@functools.lru_cache(maxsize=8192)
def facts_of(text: str) -> Facts:
    """The checkable facts of ``text`` (see the module docstring); cached by text.

    A leading speaker label ("Caroline: ...") and names the text addresses
    ("Thanks, Gina!") are not facts of it.
    """
    text = strip_speaker_label(text)
    reader = _Reader(text)
    ascii_text, han = text.isascii(), has_han(text)
    digits = _DIGIT.search(text) is not None if ascii_text else any(map(str.isdigit, text))
    if digits:
        _numbers(reader)
    negated = set(_english(reader))
    if han:
        negated |= {m[1] for m in zh.NEGATED.finditer(reader.text)}
        reader.text = zh.NEGATOR.sub(" ", reader.text)
        _chinese(reader)
    if digits:  # last: the patterns above read digits in context (6月, 7点, 2pm) first
        reader.take(_NUMBER, "number", lambda m: _normal_number(m[0]))
    # Names: capitalised words, but not common words that only start a sentence.
    stop = stopword_set()
    not_topic = _not_topic()

    def name(m: re.Match[str]) -> str | None:
        word = m[1]
        if word.lower() in stop or (_starts_sentence(m) and not _name_like(word)):
            return None
        return word.lower()

    reader.take(_PROPER, "name", name)
    sequence = tuple(
        word[:-1] if len(word) > 3 and word.endswith("s") else word  # _stem, inlined
        for word in (_WORD if han else _WORD_WITHOUT_HAN).findall(reader.text.lower())
        if word not in not_topic
    )
    values = {kind: frozenset(found) for kind, found in reader.values.items() if found}
    return Facts(
        values=values,
        words=frozenset(sequence),
        negated=frozenset(negated),
        sequence=sequence,
        tokens=tuple((_TOKEN if han else _TOKEN_WITHOUT_HAN).findall(text.lower())),
    )


def same_topic(a: Facts, b: Facts, *, min_overlap: float = 0.4) -> bool:
    """True when the two texts state nearly the same thing (values and negation aside).

    Jaccard of their topic words: a contradiction is one statement with one
    fact changed, not two sentences on a subject (dialogue turns share their
    words of thanks, and must not count). A name both texts mention ("Frank
    said ..." / "According to Frank, ...") is evidence of one topic too: then
    a third of the words in common is enough.
    """
    if not a.words or not b.words:
        return not a.words and not b.words and bool(a.values) and bool(b.values)
    shared = len(a.words & b.words)
    overlap = shared / (len(a.words) + len(b.words) - shared)
    shared_name = bool(a.values.get("name", frozenset()) & b.values.get("name", frozenset()))
    return overlap >= (min(min_overlap, 0.34) if shared_name else min_overlap)


def disagree(a: Facts, b: Facts) -> list[str]:
    """The kinds of fact two texts state differently (``"negation"`` for a flip).

    A kind disagrees when each text has a value of it the other lacks. A name
    in one text that the other has as an ordinary word ("Deploy" starting a
    sentence, "deploy" later) does not count.
    """
    flipped = any(w in b.words and w not in b.negated for w in a.negated) or any(
        w in a.words and w not in a.negated for w in b.negated
    )
    found = ["negation"] if flipped else []
    for kind in KINDS:
        mine, theirs = a.values.get(kind, frozenset()), b.values.get(kind, frozenset())
        only_mine, only_theirs = mine - theirs, theirs - mine
        if kind == "name":
            only_mine = frozenset(v for v in only_mine if v not in b.words)
            only_theirs = frozenset(v for v in only_theirs if v not in a.words)
        if only_mine and only_theirs:
            found.append(kind)
    if one_word_swapped(a.sequence, b.sequence):
        found.append("word")
    if two_words_exchanged(a.tokens, b.tokens):
        found.append("order")
    return found


def differ(a: Facts, b: Facts) -> list[str]:
    """The kinds of fact the two texts do not state alike: those they ``disagree`` on, and
    a value only one of them states ("item 10" against "item 0": a number more). Two texts
    that differ are never merged, whatever their vectors say: merging keeps one text."""
    found = disagree(a, b)
    for kind in KINDS:
        if kind in found:
            continue
        mine, theirs = a.values.get(kind, frozenset()), b.values.get(kind, frozenset())
        if kind == "name":  # a name the other text has as an ordinary word is the same
            mine = frozenset(v for v in mine if v not in b.words)
            theirs = frozenset(v for v in theirs if v not in a.words)
        if mine != theirs:
            found.append(kind)
    return found


_TOKEN = re.compile(rf"[{HAN_CLASS}]|[^\W_{HAN_CLASS}]+")  # Chinese: a character each
_TOKEN_WITHOUT_HAN = re.compile(r"[^\W_]+")  # _TOKEN, in text without Han
_RAW_WORD = re.compile(rf"[{HAN_CLASS}]|[^\W\d_{HAN_CLASS}]{{3,}}")


@functools.lru_cache(maxsize=8192)
def _raw_words(text: str) -> frozenset[str]:
    return frozenset(_RAW_WORD.findall(text.lower()))


def may_share_topic(new: str, old: str, min_overlap: float = 0.2) -> bool:
    """A cheap first look (one regex each): False when the texts surely differ in topic."""
    a, b = _raw_words(new), _raw_words(old)
    if not (a and b):
        return False
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared) >= min_overlap  # the Jaccard index


def related(new: str, old: str) -> bool:
    """True when the two texts speak of the same thing (values and negation aside)."""
    return may_share_topic(new, old) and same_topic(facts_of(new), facts_of(old))


def contradiction(new: str, old: str) -> list[str]:
    """Why ``new`` contradicts ``old`` (the kinds of fact changed); empty when it does not."""
    if not may_share_topic(new, old):
        return []
    a, b = facts_of(new), facts_of(old)
    return disagree(a, b) if same_topic(a, b) else []  # ``related``, its facts kept
