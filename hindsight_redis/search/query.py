"""Pure query building: search arguments, filters, keyword queries, leg commands.

No I/O. Everything user-supplied that reaches RediSearch's query syntax
passes through here: tag values are escaped character by character, and the
keyword query is rebuilt from word tokens only, so no operator (``-``,
``|``, ``@``, ``{``, ``*``, ``$``...) typed by a user can change a filter.
Filter values with control characters (NUL ends a query), lone surrogates
or past the write limits are refused (``InvalidQuery``): no memory could match.

Tokenisation mirrors the index. English documents are split on punctuation
except ``_`` (so ``ERR_CONN_RESET`` and ``user_42`` are single terms while
``billing-service-v2`` becomes ``billing service v2``); Chinese documents are
segmented into words and split on ``_`` too. An identifier in a query
therefore becomes its plain terms plus the exact phrases of its parts, which
find it in either kind of document. Chinese runs of the query are segmented
by the server (``parse_explain``) before building.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from hindsight_redis.core.documents import SCOPE_FIELDS
from hindsight_redis.core.fields import TEXT_FIELD
from hindsight_redis.core.models import SearchFilters
from hindsight_redis.core.text import HAN_CLASS, han_runs, is_han_word
from hindsight_redis.language.stopwords import is_han_stopword, stopword_set

MODES = ("hybrid", "vector", "keyword")
MAX_QUERY_CHARS = 8_000
MAX_TOP_K = 100
MAX_FILTER_TAGS = 64
MAX_FILTER_CHARS = 256
"""The longest filter value (agent_id, session_id, task_type, a tag): as long as a write's."""
SCORER = "BM25STD"
DISTANCE = "__dist"
"""The name a KNN leg gives its distance (``1 - cosine``)."""
# A "word" is a run of letters/digits joined by '-', '_', '.', '/', "'" (no Han).
_WORD = re.compile(rf"[^\W{HAN_CLASS}]+(?:[-_./'][^\W{HAN_CLASS}]+)*")
_PART = re.compile(r"[^\W_]+|_")
_MAX_TERMS = 64
# Weight of the keyword leg's union clause (stem-aware, partially scored under
# a filter) beside the exact optional terms; 0.5 was best on LoCoMo dev.
UNION_WEIGHT = 0.5
SYNONYM_WEIGHT = 0.5
"""A synonym's share of a query word's score in the keyword leg (``language.synonyms``)."""


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
    return [w for w in dict.fromkeys(words) if w and is_han_word(w)]


def _quote_phrase(parts: Sequence[str]) -> str:
    return '"' + " ".join(parts) + '"'


def keyword_terms(text: str, segmented: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The query terms of ``text``: lowercased words, stopwords removed.

    Identifiers add exact phrases of their parts (``"billing service v2"``,
    ``"err conn reset"``). ``segmented`` maps a Han run to its words; runs
    not in it are used whole.
    """
    return joined_terms(word_terms(text), han_runs(text), segmented)


def word_terms(text: str) -> list[str]:
    """The terms of ``text`` outside its Han runs (``keyword_terms``), in order, repeats kept."""
    stop = stopword_set()
    terms: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).strip("'")
        # The English tokenizer keeps '_' inside a term and splits on the rest.
        pieces = [p for p in re.split(r"[^\w]+", word) if p]
        for piece in pieces:
            if piece not in stop and piece.strip("_") != "":
                terms.append(piece)
        if len(pieces) > 1 and re.search(r"[-_./]", word):
            terms.append(_quote_phrase(pieces))
        # Chinese documents split identifiers on '_' as well.
        fine = [p for p in _PART.findall(word) if p != "_"]
        if len(fine) > 1 and fine != pieces:
            terms.append(_quote_phrase(fine))
    return terms


def joined_terms(
    words: Iterable[str],
    runs: Iterable[str],
    segmented: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """``words`` then the words of each Han run (``segmented``, else the run whole),
    each once, at most ``_MAX_TERMS``.

    The segmented words leave out Chinese function words (``is_han_stopword``:
    "我", "的", "什么时候"), unless nothing else is left of the query.
    """
    terms = list(words)
    function_words: list[str] = []
    seams: list[str] = []
    for run in runs:
        found = list(segmented.get(run, ())) if segmented else []
        for word in found or [run]:
            (function_words if found and is_han_stopword(word) else terms).append(word)
        seams += seam_words(found)
    chosen = list(dict.fromkeys(terms or function_words))
    chosen += [w for w in dict.fromkeys(seams) if w not in chosen and not is_han_stopword(w)]
    return chosen[:_MAX_TERMS]


def seam_words(found: Sequence[str]) -> list[str]:
    """Two-character words the segmenter may have cut differently in a document.

    The server segments a query and a document alone, and cuts the same word
    differently with other neighbours ("停车|位" in a query, "车位" in the
    document): the pair across a cut next to a lone character, and the ends of
    words of three characters or more ("编辑器": "编辑"), are matched too;
    never next to a function word.
    """
    pairs: list[str] = []
    for left, right in pairwise(found):
        content = not is_han_stopword(left) and not is_han_stopword(right)
        if content and 1 in (len(left), len(right)) and is_han_word(left + right):
            pairs.append(left[-1] + right[0])
    for word in found:
        if len(word) >= 3 and is_han_word(word):
            pairs += [word[:2], word[-2:]]
    return pairs


def keyword_query(
    terms: Sequence[str],
    filter_expr: str | None,
    *,
    union_weight: float = UNION_WEIGHT,
    common: Collection[str] = (),
    synonyms: Collection[str] = (),
    synonym_weight: float = SYNONYM_WEIGHT,
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

    ``common`` terms (``term_stats``: past the budget of the rarest ones)
    only score: the union selects by the other terms, and every term is an
    optional clause, so a common term adds its score to the documents the
    rare ones found without making the server score every document it is in.

    ``synonyms`` (terms of ``terms``: ``language.synonyms``) count ``synonym_weight``
    of a word's score in the plain union (``weighted_term``); in the other shapes they
    join the union only (RediSearch loses the weight of an optional clause).
    """
    if not terms:
        return None
    words = [t for t in terms if t not in synonyms]
    weighted = {t: weighted_term(t, synonym_weight) for t in terms if t in synonyms}
    every = words + list(weighted.values())
    selecting = [t for t in words if t not in common]
    selecting += [clause for t, clause in weighted.items() if t not in common]
    scored = " ".join(f"~@{TEXT_FIELD}:{term}" for term in words)
    if len(selecting) < len(every) and selecting:
        union = f"(@{TEXT_FIELD}:({' | '.join(selecting)}))=>{{$weight: {union_weight}}}"
        query = f"{scored} {union}"
        return f"{query} ({filter_expr})=>{{$weight: 0.0}}" if filter_expr else query
    if filter_expr is None:
        # Unintersected, a union is scored for every term it matches: the plain
        # union ranks as well (LoCoMo hybrid R@10 0.625 vs 0.627, one pool per
        # conversation) and costs a quarter less on long posting lists.
        return f"@{TEXT_FIELD}:({' | '.join(every)})"
    query = f"{scored} (@{TEXT_FIELD}:({' | '.join(every)}))=>{{$weight: {union_weight}}}"
    return f"{query} ({filter_expr})=>{{$weight: 0.0}}" if filter_expr else query


def weighted_term(term: str, weight: float) -> str:
    """``term`` counting ``weight`` of its BM25 score, as a clause of ``keyword_query``.

    BM25STD ignores the weight of a term node, and a union of one live term is
    replaced by the term (its weight lost): the term twice, in a union weighted
    half as much, scores ``weight`` of the term (in a plain union: checked by
    tests/integration/search/test_search.py).
    """
    return f"({term} | {term})=>{{$weight: {weight / 2:g}}}"


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
        or filters.occurred_since is not None
        or filters.occurred_until is not None
        or filters.trusted_only
    )


def knn_command(
    index: str,
    field: str,
    filter_expr: str | None,
    vector: bytes,
    k: int,
    ef_runtime: int,
    also: Sequence[str] = (),
) -> list[Any]:
    """``FT.SEARCH`` of the ``k`` nearest ``field`` vectors (within ``filter_expr``).

    Rows carry ``SCOPE_FIELDS``, the ``also`` fields and their distance ``DISTANCE``.
    """
    scope = "*" if filter_expr is None else f"({filter_expr})"
    knn = f"{scope}=>[KNN $K @{field} $BLOB EF_RUNTIME $EF AS {DISTANCE}]"
    fields = [*SCOPE_FIELDS, *also, DISTANCE]
    return [
        "FT.SEARCH",
        index,
        knn,
        "PARAMS",
        "6",
        "K",
        str(k),
        "BLOB",
        vector,
        "EF",
        str(max(ef_runtime, k)),
        "SORTBY",
        DISTANCE,
        "ASC",
        "LIMIT",
        "0",
        str(k),
        "RETURN",
        str(len(fields)),
        *fields,
        "DIALECT",
        "2",
    ]


def newest_command(index: str, query: str, limit: int, fields: Sequence[str]) -> list[Any]:
    """``FT.SEARCH`` of the ``limit`` newest memories (``created_at``) matching ``query``."""
    return [
        "FT.SEARCH",
        index,
        query,
        "SORTBY",
        "created_at",
        "DESC",
        "LIMIT",
        "0",
        str(limit),
        "RETURN",
        str(len(fields)),
        *fields,
        "DIALECT",
        "2",
    ]


def keyword_command(index: str, query: str, k: int, also: Sequence[str] = ()) -> list[Any]:
    """``FT.SEARCH`` of the ``k`` best BM25 matches of ``query`` (``keyword_query``)."""
    fields = [*SCOPE_FIELDS, *also]
    return [
        "FT.SEARCH",
        index,
        query,
        "SCORER",
        SCORER,
        "WITHSCORES",
        "LIMIT",
        "0",
        str(k),
        "RETURN",
        str(len(fields)),
        *fields,
        "DIALECT",
        "2",
    ]
