"""What a search reads from its query, read once.

Pure module: no I/O. ``QueryAnalysis.of`` reads the checked query text once
(``core.checks.check_search``): its Han runs (the script of the query), its keyword
words, the time range it names (``when.time_range``), whether it asks for a
time (``answer_type.asks_time``) and whether it asks about the past
(``answer_type.asks_about_the_past``), the names it gives (``names``: the
capitalized words, for the speaker re-ranker) and the kind of thing it asks for
(``kinds.asked_kind``: "What books has Tim read?"). The legs and the re-rankers read
the analysis, never the text again.

The keyword terms of a Chinese query need the server's segmentation of its
Han runs (``FT.EXPLAINCLI``, one round trip): the analysis names the runs to
segment (``runs_to_segment``) and gives the terms once they are segmented
(``terms``).

``TimeQuery`` is the analysis's time signals weighed by ``SearchSettings``:
what the plan (the candidates of the range named, the pool fusion keeps) and
the time re-rankers (boost, lead-in) read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hindsight_redis.core.text import han_runs
from hindsight_redis.language.answer_type import asks_about_the_past, asks_time
from hindsight_redis.language.kind_members import members
from hindsight_redis.language.kinds import AskedKind, asked_kind
from hindsight_redis.language.stopwords import stopword_set
from hindsight_redis.language.when import TimeRange, time_range
from hindsight_redis.search.query import joined_terms, word_terms
from hindsight_redis.settings import SearchSettings

SEGMENTED_RUNS = 64
"""Han runs of a query segmented by the server; later runs are used whole (a query
keeps 64 terms anyway, so a query of thousands of runs costs no more)."""


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """A query as the legs and re-rankers read it: made once per search (``of``).

    ``text`` is the checked, stripped query; ``han_runs`` its runs of Han
    characters in order; ``words`` its keyword terms outside them (repeats
    kept); ``time_range`` the range it names relative to the moment of the
    search (None: none); ``asks_time`` whether it asks for a time or a span;
    ``about_the_past`` whether it asks how things were, or changed; ``names`` the
    capitalized words; ``kind`` the kind of thing it asks for (None: none);
    ``related`` that kind's common members (``kind_members.members``: "instruments" ->
    piano, guitar...), which widen the static query vector and the keyword terms.
    """

    text: str
    han_runs: tuple[str, ...]
    words: tuple[str, ...]
    time_range: TimeRange | None
    asks_time: bool
    about_the_past: bool
    names: tuple[str, ...] = ()
    kind: AskedKind | None = None
    related: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str, now: float) -> QueryAnalysis:
        """The analysis of ``text`` (checked already), its relative times read at ``now``."""
        kind = asked_kind(text)
        return cls(
            text=text,
            han_runs=tuple(han_runs(text)),
            words=tuple(word_terms(text)),
            time_range=time_range(text, now),
            asks_time=asks_time(text),
            about_the_past=asks_about_the_past(text),
            names=names(text),
            kind=kind,
            related=members(kind),
        )

    @property
    def chinese(self) -> bool:
        """Whether the query holds Han text (its keyword terms need segmenting)."""
        return bool(self.han_runs)

    @property
    def vector_text(self) -> str:
        """The text of the static query vector: the query, then the ``related`` words."""
        return " ".join((self.text, *self.related)) if self.related else self.text

    def related_terms(self) -> list[str]:
        """The ``related`` words the keyword leg adds: the plain words among them (a
        hyphenated or possessive one only widens the vector)."""
        return [w for w in self.related if _PLAIN.fullmatch(w)]

    @property
    def script(self) -> str:
        """The script of the query as the index stores a memory's: ``han`` or ``latin``."""
        return "han" if self.han_runs else "latin"

    def runs_to_segment(self) -> tuple[str, ...]:
        """The distinct Han runs the server segments (the first ``SEGMENTED_RUNS``)."""
        return tuple(dict.fromkeys(self.han_runs))[:SEGMENTED_RUNS]

    def terms(self, segmented: Mapping[str, Sequence[str]] | None = None) -> list[str]:
        """The keyword terms: the words, then each Han run's words as ``segmented``
        maps them (a run not in it, whole); each once, at most 64."""
        return joined_terms(self.words, self.han_runs, segmented)


_PLAIN = re.compile(r"[a-z]+")
_NAME = re.compile(r"(?<![\w'-])[A-Z][\w'.-]*")


def names(text: str) -> tuple[str, ...]:
    """The capitalized words of ``text`` that are not stopwords ("What", "I"), a
    possessive's ``'s`` left off, each once, in order."""
    stop = stopword_set()
    found = (
        m.group(0).removesuffix("'s").removesuffix("’s").rstrip(".'") for m in _NAME.finditer(text)
    )
    return tuple(dict.fromkeys(w for w in found if w and w.lower() not in stop))


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """What a query says about time, weighed: the range it names and whether it asks
    for a time (each None/False when its weight is 0), and what each signal adds to a
    hit's fused score (``slack_s``: how far outside the range a hit still counts)."""

    window: TimeRange | None
    asks: bool
    weight: float
    slack_s: float
    answer_weight: float

    @classmethod
    def of(cls, analysis: QueryAnalysis, settings: SearchSettings) -> TimeQuery:
        """The time signals of ``analysis`` under ``settings`` (``search_date_*``,
        ``search_time_answer_weight``)."""
        weight, answer_weight = settings.search_date_weight, settings.search_time_answer_weight
        return cls(
            window=analysis.time_range if weight > 0 else None,
            asks=answer_weight > 0 and analysis.asks_time,
            weight=weight,
            slack_s=settings.search_date_slack_days * 86_400.0,
            answer_weight=answer_weight,
        )

    @property
    def active(self) -> bool:
        """Whether the time boost can change the order."""
        return (self.window is not None and self.weight > 0) or (
            self.asks and self.answer_weight > 0
        )
