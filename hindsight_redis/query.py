"""Pure query building: filters, keyword queries, and score fusion.

No I/O. Everything user-supplied that reaches RediSearch's query syntax
passes through here: tag values are escaped character by character, and the
keyword query is rebuilt from word tokens only, so no operator (``-``,
``|``, ``@``, ``{``, ``*``, ``$``...) typed by a user can change a filter.

Tokenisation mirrors the index. English documents are split on punctuation
except ``_`` (so ``ERR_CONN_RESET`` and ``user_42`` are single terms while
``billing-service-v2`` becomes ``billing service v2``); Chinese documents are
segmented into words and split on ``_`` too. An identifier in a query
therefore becomes its plain terms plus the exact phrases of its parts, which
find it in either kind of document. Chinese runs of the query are segmented
by the server (``segment_hint`` / ``parse_explain``) before building.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from hindsight_redis.models import SearchFilters
from hindsight_redis.schema import STOPWORDS, TEXT_FIELD

_STOP = frozenset(STOPWORDS)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A "word" is a run of letters/digits joined by '-', '_', '.', '/', "'" (no Han).
_WORD = re.compile(rf"[^\W{_HAN}]+(?:[-_./'][^\W{_HAN}]+)*")
_HAN_RUN = re.compile(rf"[{_HAN}]+")
_PART = re.compile(r"[^\W_]+|_")
_MAX_TERMS = 64
# Weight of the keyword leg's union clause (stem-aware, partially scored under
# a filter) beside the exact optional terms; 0.5 was best on LoCoMo dev.
UNION_WEIGHT = 0.5


def escape_tag(value: str) -> str:
    """A tag value safe inside ``@field:{...}``: every non-word character escaped."""
    if not value:
        raise ValueError("tag values must not be empty")
    return "".join(ch if ch.isalnum() or ch == "_" else "\\" + ch for ch in value)


def tag_clause(field: str, value: str) -> str:
    """``@field:{value}`` with the value escaped (exact match of one tag)."""
    return f"@{field}:{{{escape_tag(value)}}}"


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("time bounds must be finite numbers")
    return repr(float(value))


def refine_pending_filter(namespace: str) -> str:
    """Memories of ``namespace`` still waiting for their contextual vector."""
    return f"{tag_clause('namespace', namespace)} {tag_clause('refine', 'pending')}"


def build_filter(namespace: str, filters: SearchFilters) -> str:
    """The RediSearch filter expression (DIALECT 2) for a search.

    Always restricts to the namespace; to ``status`` active unless
    ``include_archived``; to shared memories unless ``agent_id`` is given (an
    agent sees its own private memories). All given ``tags`` must be present.
    """
    parts = [tag_clause("namespace", namespace)]
    if not filters.include_archived:
        parts.append(tag_clause("status", "active"))
    if filters.agent_id:
        parts.append(tag_clause("agent_id", filters.agent_id))
    else:
        parts.append(tag_clause("visibility", "shared"))
    if filters.session_id:
        parts.append(tag_clause("session_id", filters.session_id))
    if filters.task_type:
        parts.append(tag_clause("task_type", filters.task_type))
    for tag in filters.tags or ():
        parts.append(tag_clause("tags", tag))
    if filters.since is not None or filters.until is not None:
        low = "-inf" if filters.since is None else _number(filters.since)
        high = "+inf" if filters.until is None else _number(filters.until)
        parts.append(f"@created_at:[{low} {high}]")
    return " ".join(parts)


def han_runs(text: str) -> list[str]:
    """The runs of Han characters in ``text`` (to be segmented by the server)."""
    return _HAN_RUN.findall(text)


def parse_explain(lines: Iterable[str | bytes]) -> list[str]:
    """Words of an ``FT.EXPLAINCLI`` plan: its leaf terms, segmented ones first."""
    expanded: list[str] = []
    plain: list[str] = []
    for raw in lines:
        line = (raw.decode() if isinstance(raw, bytes) else raw).strip()
        if not line or line.endswith("{") or line == "}" or "{" in line:
            continue
        if line.endswith("(expanded)"):
            expanded.append(line[: -len("(expanded)")].lstrip("+"))
        else:
            plain.append(line.lstrip("+"))
    words = expanded or plain
    return [w for w in dict.fromkeys(words) if w and _HAN_RUN.fullmatch(w)]


def _quote_phrase(parts: Sequence[str]) -> str:
    return '"' + " ".join(parts) + '"'


def keyword_terms(text: str, segmented: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The query terms of ``text``: lowercased words, stopwords removed.

    Identifiers add exact phrases of their parts (``"billing service v2"``,
    ``"err conn reset"``). ``segmented`` maps a Han run to its words; runs
    not in it are used whole.
    """
    terms: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).strip("'")
        # The English tokenizer keeps '_' inside a term and splits on the rest.
        pieces = [p for p in re.split(r"[^\w]+", word) if p]
        for piece in pieces:
            if piece not in _STOP and piece.strip("_") != "":
                terms.append(piece)
        if len(pieces) > 1 and re.search(r"[-_./]", word):
            terms.append(_quote_phrase(pieces))
        # Chinese documents split identifiers on '_' as well.
        fine = [p for p in _PART.findall(word) if p != "_"]
        if len(fine) > 1 and fine != pieces:
            terms.append(_quote_phrase(fine))
    for run in han_runs(text):
        words = list(segmented.get(run, ())) if segmented else []
        terms.extend(words or [run])
    return list(dict.fromkeys(terms))[:_MAX_TERMS]


def keyword_query(
    terms: Sequence[str], filter_expr: str | None, *, union_weight: float = UNION_WEIGHT
) -> str | None:
    """The full-text query of the keyword leg; None without terms.

    Without a filter: the plain union ``@content:(a | b)``. With one, the
    shape is ``~@content:a ~@content:b (@content:(a | b))=>{$weight: w}
    (<filter>)=>{$weight: 0.0}``. Each optional term adds its exact BM25
    contribution; the union selects the documents (any term, stems
    included) and adds ``w`` times its own score, which is how stem-only
    matches score at all (optional terms are not stem-expanded). The union
    alone is not enough under a filter: when RediSearch intersects a union
    with tag clauses it advances the union with skips that stop at the first
    matching child, so a document matching several terms is scored for only
    one of them (LoCoMo keyword recall@10 0.495 instead of 0.61, see
    benchmarks/README.md). ``filter_expr`` must have two clauses or more
    (``build_filter`` always does): RediSearch ignores ``$weight`` on a
    single tag clause.
    """
    if not terms:
        return None
    if filter_expr is None:
        # Unintersected, a union is scored for every term it matches: the plain
        # union ranks as well (LoCoMo hybrid R@10 0.625 vs 0.627, one pool per
        # conversation) and costs a quarter less on long posting lists.
        return f"@{TEXT_FIELD}:({' | '.join(terms)})"
    scored = " ".join(f"~@{TEXT_FIELD}:{term}" for term in terms)
    query = f"{scored} (@{TEXT_FIELD}:({' | '.join(terms)}))=>{{$weight: {union_weight}}}"
    return f"{query} ({filter_expr})=>{{$weight: 0.0}}" if filter_expr else query


def is_selective(filters: SearchFilters) -> bool:
    """True when the filters go beyond the defaults (status and visibility).

    The default filters match nearly every memory: as a pre-filter they cost
    more than they save, so searches post-filter them instead.
    """
    return bool(
        filters.agent_id
        or filters.session_id
        or filters.task_type
        or filters.tags
        or filters.since is not None
        or filters.until is not None
    )


def rrf(rankings: Sequence[Sequence[str]], *, k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over each ranking."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return scores


def min_max(scores: Mapping[str, float], *, floor: float | None = None) -> dict[str, float]:
    """Scores scaled to 0..1 (all 1.0 when they are equal).

    ``floor`` caps the low end (``min(floor, lowest)``): with ``floor=0`` a
    top-k list of BM25 scores is scaled as if the unmatched rest of the
    collection, scoring 0, had been included.
    """
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if floor is not None:
        low = min(low, floor)
    if high - low <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def linear_blend(
    vector: Mapping[str, float],
    keyword: Mapping[str, float],
    *,
    alpha: float,
    keyword_complete: bool = False,
    contextual: Mapping[str, float] | None = None,
    contextual_weight: float = 0.0,
) -> dict[str, float]:
    """``alpha * minmax(cosine) + (1 - alpha) * minmax0(bm25)`` over the candidate lists.

    Cosines are min-max scaled over ``vector``, BM25 scores over
    ``keyword`` with 0 as the low end (``min_max(floor=0)``). A
    document missing from one list gets that list's lowest scaled score: it
    ranked below every candidate there, but is not known to be unrelated.
    (On LoCoMo this beat raw cosines, z-scores and a missing score of 0.)
    With ``keyword_complete`` (the keyword leg returned every match, fewer
    than it asked for) a document missing from it matches no query term and
    gets 0: otherwise, in a small pool, a text sharing no word with the
    query would inherit the keyword credit of the weakest real match.

    With ``contextual`` cosines, the blend is ``w * minmax(contextual) +
    (1 - w) * (the blend above)``, ``w = contextual_weight``. A document
    without a contextual score (not refined yet) is ranked by the blend
    above alone, as if its contextual score agreed with it: a memory written
    a second ago must not lose to unrelated refined ones.
    """
    if not 0.0 <= alpha <= 1.0 or not 0.0 <= contextual_weight <= 1.0:
        raise ValueError("alpha and contextual_weight must be between 0 and 1")
    vec = min_max(vector)
    kw = min_max(keyword, floor=0.0)
    ctx = min_max(contextual or {})
    vec_low = min(vec.values(), default=0.0)
    kw_low = 0.0 if keyword_complete else min(kw.values(), default=0.0)
    weight = contextual_weight if ctx else 0.0
    fused = {}
    for doc_id in dict.fromkeys([*vector, *keyword, *(contextual or {})]):
        base = alpha * vec.get(doc_id, vec_low) + (1 - alpha) * kw.get(doc_id, kw_low)
        fused[doc_id] = weight * ctx.get(doc_id, base) + (1 - weight) * base
    return fused


def top(scores: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` ids with the highest scores (ties by id, for stable output)."""
    return sorted(scores, key=lambda d: (-scores[d], d))[:n]
