"""Evaluating search on the user's own data: a golden file of questions, or the pool itself.

A golden file is JSON Lines, one question per line::

    {"query": "...", "relevant": ["<memory id>"], "relevant_sources": ["<source>"],
     "filters": {"session_id": "..."}, "as_agent": "...", "tags": ["<label>"]}

``relevant`` (memory ids) and ``relevant_sources`` (the ``source`` values the memories
were written with) name what answers the question, whichever the user has; ``filters`` are
the search's own options (``core.requests.SearchOptions``, but ``top_k`` and ``mode``,
which the evaluation sets); ``tags`` label the question for the report (per tag), they
filter nothing. Each question runs through the public search path; the report has
recall@k, hit@k, MRR and nDCG@k (binary gains), overall and per tag, the questions that
found nothing relevant, and the search latency. A hit counts for a source by the ``source``
it carries (a merged memory's first write's, as search shows it).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from hindsight_redis.core.models import SearchHit, SearchMode
from hindsight_redis.core.requests import SEARCH_OPTIONS, parse_search
from hindsight_redis.errors import InvalidArgument, InvalidQuery

METRICS = ("recall", "hit", "mrr", "ndcg")
"""The metrics of a report, as ``--fail-under`` and ``--compare`` name them."""
_KEYS = frozenset({"query", "relevant", "relevant_sources", "filters", "as_agent", "tags"})
_SET_BY_EVAL = frozenset({"top_k", "mode"})
_FILTERS = tuple(o for o in SEARCH_OPTIONS if o not in _SET_BY_EVAL)
MAX_QUESTIONS = 100_000


class Search(Protocol):
    """The public search: ``client.search``."""

    def __call__(
        self, query: str, *, as_agent: str | None = None, **options: Any
    ) -> Awaitable[list[SearchHit]]: ...


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    """One line of a golden file, validated."""

    query: str
    relevant: tuple[str, ...] = ()
    relevant_sources: tuple[str, ...] = ()
    filters: Mapping[str, Any] = field(default_factory=dict)
    as_agent: str | None = None
    tags: tuple[str, ...] = ()
    line: int = 0


@dataclass(frozen=True, slots=True)
class Scores:
    """One question's metrics at k."""

    recall: float
    hit: float
    mrr: float
    ndcg: float


@dataclass(frozen=True, slots=True)
class Metrics:
    """Metrics averaged over ``questions`` questions."""

    questions: int
    recall: float
    hit: float
    mrr: float
    ndcg: float


@dataclass(frozen=True, slots=True)
class Missed:
    """A question none of whose relevant memories was in the top k (``line``: its line in
    the golden file; for a self-check, the sampled memory's id is ``relevant``)."""

    line: int
    query: str
    relevant: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EvalReport:
    """What an evaluation found: metrics overall and per tag, the questions that missed,
    and the search latency (p50 / p99, milliseconds)."""

    kind: Literal["golden", "self"]
    mode: str
    k: int
    overall: Metrics
    by_tag: dict[str, Metrics]
    missed: list[Missed]
    p50_ms: float
    p99_ms: float
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values (what ``eval --json`` prints)."""
        return asdict(self)


# -- golden files -------------------------------------------------------------------


def read_golden(path: str | Path) -> list[GoldenQuestion]:
    """The questions of a golden file; ``InvalidArgument`` naming the file and line of the
    first bad one."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"cannot read golden file {str(where)!r}: {e}") from None
    questions: list[GoldenQuestion] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as e:
            raise InvalidArgument(f"{where}, line {n}: not JSON ({e})") from None
        questions.append(_located(where, n, value))
    return check_questions(questions, str(where))


def golden_questions(items: Iterable[Mapping[str, Any] | GoldenQuestion]) -> list[GoldenQuestion]:
    """Questions given in code (dicts of a golden line's keys), validated as a file's are."""
    if isinstance(items, Mapping | str | bytes):
        raise InvalidArgument("golden questions are a list of dicts (or a file's path)")
    questions = [
        item if isinstance(item, GoldenQuestion) else _located(None, n, item)
        for n, item in enumerate(items, 1)
    ]
    return check_questions(questions, "the golden questions")


def check_questions(questions: list[GoldenQuestion], what: str) -> list[GoldenQuestion]:
    """``questions`` unless there are none or too many."""
    if not questions:
        raise InvalidArgument(f"{what}: no questions")
    if len(questions) > MAX_QUESTIONS:
        raise InvalidArgument(f"{what}: more than {MAX_QUESTIONS:,} questions")
    return questions


def _located(path: Path | None, line: int, value: object) -> GoldenQuestion:
    try:
        return parse_question(value, line)
    except InvalidArgument as e:
        where = f"{path}, line {line}" if path is not None else f"question {line}"
        raise InvalidArgument(f"{where}: {e}") from None


def parse_question(value: object, line: int = 0) -> GoldenQuestion:
    """One golden line's object as a ``GoldenQuestion``; ``InvalidArgument`` says what is
    wrong with it."""
    if not isinstance(value, Mapping):
        raise InvalidArgument("a question is a JSON object")
    unknown = sorted(value.keys() - _KEYS)
    if unknown:
        raise InvalidArgument(f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    query = value.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("'query' must be a non-empty string")
    relevant = _strings(value, "relevant")
    sources = _strings(value, "relevant_sources")
    if not relevant and not sources:
        raise InvalidArgument("name what answers it: 'relevant' (ids) or 'relevant_sources'")
    filters = value.get("filters")
    filters = {} if filters is None else filters
    if not isinstance(filters, Mapping):
        raise InvalidArgument("'filters' must be an object")
    for name in filters:
        if name in _SET_BY_EVAL:
            raise InvalidArgument(f"'filters' cannot set {name!r}: the evaluation sets it")
        if name not in _FILTERS:
            raise InvalidArgument(f"unknown filter {name!r} (filters: {', '.join(_FILTERS)})")
    as_agent = value.get("as_agent")
    if as_agent is not None and (not isinstance(as_agent, str) or len(as_agent) > 256):
        raise InvalidArgument("'as_agent' must be a string of at most 256 characters")
    try:
        parse_search(query, dict(filters), viewer=as_agent or "")
    except InvalidQuery as e:
        raise InvalidArgument(str(e)) from None
    return GoldenQuestion(
        query=query,
        relevant=relevant,
        relevant_sources=sources,
        filters=dict(filters),
        as_agent=as_agent,
        tags=_strings(value, "tags"),
        line=line,
    )


def _strings(value: Mapping[str, Any], key: str) -> tuple[str, ...]:
    items = value.get(key)
    items = [] if items is None else items
    if not isinstance(items, list) or not all(isinstance(x, str) and x for x in items):
        raise InvalidArgument(f"{key!r} must be a list of non-empty strings")
    return tuple(dict.fromkeys(items))


# -- metrics ------------------------------------------------------------------------


def score(
    ranked: Sequence[tuple[str, str]],
    relevant: Iterable[str] = (),
    relevant_sources: Iterable[str] = (),
    k: int = 10,
) -> Scores:
    """The metrics at ``k`` of one ranked list of hits, each ``(memory id, source)``.

    What is relevant is a set of ids and sources; a hit finds those it matches. recall is
    the share of them found in the top k; hit whether any was; MRR 1 / the rank of the
    first hit that finds one (0: none in the top k); nDCG@k with a gain of 1 for each hit
    that finds one not found above it.
    """
    wanted = {("id", x) for x in relevant} | {("source", x) for x in relevant_sources}
    if not wanted:
        raise InvalidArgument("nothing is relevant: a question needs an id or a source")
    found: set[tuple[str, str]] = set()
    first = 0
    dcg = 0.0
    for rank, (memory_id, source) in enumerate(ranked[:k], 1):
        new = ({("id", memory_id), ("source", source)} & wanted) - found
        if not new:
            continue
        found |= new
        first = first or rank
        dcg += 1 / math.log2(rank + 1)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return Scores(
        recall=len(found) / len(wanted),
        hit=1.0 if found else 0.0,
        mrr=1 / first if first else 0.0,
        ndcg=dcg / ideal,
    )


def mean(scores: Sequence[Scores]) -> Metrics:
    """The average of each metric."""
    n = len(scores)
    if not n:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0)
    return Metrics(
        questions=n,
        recall=sum(s.recall for s in scores) / n,
        hit=sum(s.hit for s in scores) / n,
        mrr=sum(s.mrr for s in scores) / n,
        ndcg=sum(s.ndcg for s in scores) / n,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank (as the benchmarks compute it); 0.0
    without values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))]


# -- a run --------------------------------------------------------------------------


Progress = Callable[[int, int], None]


async def run_golden(
    search: Search,
    questions: Sequence[GoldenQuestion],
    *,
    k: int = 10,
    mode: SearchMode = "hybrid",
    as_agent: str | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Ask each question through ``search`` (the public one) and score its top ``k``; a
    question's own ``as_agent`` before ``as_agent``."""
    check_run(k, mode)
    scores: list[Scores] = []
    by_tag: dict[str, list[Scores]] = {}
    missed: list[Missed] = []
    times: list[float] = []
    for n, q in enumerate(questions, 1):
        t0 = time.perf_counter()
        caller = as_agent if q.as_agent is None else q.as_agent
        hits = await search(q.query, as_agent=caller, top_k=k, mode=mode, **q.filters)
        times.append((time.perf_counter() - t0) * 1000)
        s = score([(h.id, h.source) for h in hits], q.relevant, q.relevant_sources, k)
        scores.append(s)
        for tag in q.tags:
            by_tag.setdefault(tag, []).append(s)
        if not s.hit:
            missed.append(Missed(q.line, q.query, (*q.relevant, *q.relevant_sources)))
        if progress is not None:
            progress(n, len(questions))
    return report("golden", mode, k, scores, by_tag, missed, times)


def check_run(k: int, mode: str) -> None:
    """``InvalidArgument`` for a ``k`` or ``mode`` no search takes."""
    try:
        parse_search("x", {"top_k": k, "mode": mode}, viewer="")
    except InvalidQuery as e:
        raise InvalidArgument(str(e)) from None


def report(
    kind: Literal["golden", "self"],
    mode: str,
    k: int,
    scores: Sequence[Scores],
    by_tag: Mapping[str, Sequence[Scores]],
    missed: list[Missed],
    times: Sequence[float],
    notes: list[str] | None = None,
) -> EvalReport:
    """The report of scored questions."""
    return EvalReport(
        kind=kind,
        mode=mode,
        k=k,
        overall=mean(scores),
        by_tag={tag: mean(rows) for tag, rows in sorted(by_tag.items())},
        missed=missed,
        p50_ms=percentile(times, 50),
        p99_ms=percentile(times, 99),
        notes=notes or [],
    )


# -- CI: thresholds and comparisons -------------------------------------------------


def parse_thresholds(text: str) -> dict[str, float]:
    """``recall=0.7,mrr=0.5`` as ``{"recall": 0.7, "mrr": 0.5}``; ``InvalidArgument`` for a
    metric that is not one of ``METRICS`` or a value not in 0..1."""
    found: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        name = name.strip().lower().split("@", 1)[0]
        if not sep or name not in METRICS:
            raise InvalidArgument(
                f"--fail-under takes METRIC=VALUE pairs ({', '.join(METRICS)}), got {part!r}"
            )
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not 0 <= number <= 1:
            raise InvalidArgument(f"--fail-under {name}: a value from 0 to 1, got {value!r}")
        found[name] = number
    if not found:
        raise InvalidArgument("--fail-under takes METRIC=VALUE pairs, e.g. recall=0.7")
    return found


def below(overall: Metrics, thresholds: Mapping[str, float]) -> list[str]:
    """The thresholds the metrics fall under, as lines (``recall 0.650 < 0.700``)."""
    return [
        f"{name} {getattr(overall, name):.3f} < {limit:.3f}"
        for name, limit in thresholds.items()
        if getattr(overall, name) < limit
    ]


def read_report(path: str | Path) -> dict[str, Any]:
    """A report ``eval --json`` wrote; ``InvalidArgument`` when the file is not one."""
    try:
        value: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InvalidArgument(f"cannot read report {str(path)!r}: {e}") from None
    overall = value.get("overall") if isinstance(value, dict) else None
    if not isinstance(overall, dict) or not all(
        isinstance(overall.get(m), int | float) for m in METRICS
    ):
        raise InvalidArgument(f"{path}: not a report of `eval --json` (no overall metrics)")
    return dict(value)


def compare(before: Mapping[str, Any], after: EvalReport) -> list[tuple[str, float, float]]:
    """Each metric (and p50 / p99) before and now, ``before`` being a report's JSON."""
    rows = [(m, float(before["overall"][m]), float(getattr(after.overall, m))) for m in METRICS]
    for name in ("p50_ms", "p99_ms"):
        if isinstance(before.get(name), int | float):
            rows.append((name, float(before[name]), float(getattr(after, name))))
    return rows
