"""A health check of search that needs no labels: can the pool find its own memories?

``N`` active memories the caller may see are sampled at random; a query is made from each
(its rarest words, rarity counted in a larger sample of the pool; Chinese runs segmented
by the server as the index segments them; or the LLM's question when one is configured)
and searched with the public path. The report is the evaluation's (``ops.evaluate``): the
sampled memory is the one relevant answer, so recall and hit are self-hit@k, with MRR and
nDCG beside them, and the memories not found are listed by id.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchFilters, SearchMode
from hindsight_redis.core.resp import as_text, search_rows, search_total
from hindsight_redis.core.text import han_runs
from hindsight_redis.errors import InvalidArgument, ProviderError, redis_errors
from hindsight_redis.index.filters import build_filter
from hindsight_redis.index.record import recorded_index
from hindsight_redis.ops.evaluate import (
    EvalReport,
    Missed,
    Progress,
    Scores,
    Search,
    check_run,
    report,
    score,
)
from hindsight_redis.providers.llm import LLMClient
from hindsight_redis.search.query import parse_explain, word_terms

QUERY_WORDS = 4
"""Words of a rare-word query: enough to point at one memory, few enough to be a query."""
BACKGROUND = 200
"""Memories sampled to count how rare a word is (at least; the N sampled count too)."""
MAX_SAMPLE = 10_000
_LLM_PROMPT = (
    "You test a memory search. Given one stored memory, write the short question a user "
    "would ask to recall it, in the memory's language, in your own words: do not copy "
    "it. Answer with the question only."
)


@dataclass(frozen=True, slots=True)
class Sampled:
    """A sampled memory: its id and text."""

    id: str
    content: str


async def sample_memories(
    redis: Redis, keys: Keys, count: int, *, viewer: str, rng: random.Random
) -> list[Sampled]:
    """Up to ``count`` active memories ``viewer`` may see, at random (random offsets into
    the namespace's index, one pipelined round trip); none before the index exists."""
    if await recorded_index(redis, keys) is None:
        return []
    expr = build_filter(keys.namespace, SearchFilters(viewer=viewer))
    alias = keys.index_alias
    with redis_errors("sample the memories"):
        reply = await redis.execute_command(  # type: ignore[no-untyped-call]
            "FT.SEARCH", alias, expr, "LIMIT", "0", "0", "DIALECT", "2"
        )
        total = search_total(reply)
        offsets = rng.sample(range(total), min(count, total))
        async with redis.pipeline(transaction=False) as pipe:
            for offset in offsets:
                pipe.execute_command(
                    "FT.SEARCH",
                    alias,
                    expr,
                    "RETURN",
                    "1",
                    "content",
                    "LIMIT",
                    str(offset),
                    "1",
                    "DIALECT",
                    "2",
                )
            replies = await pipe.execute()
    sampled: dict[str, Sampled] = {}
    for rows in map(search_rows, replies):
        for row in rows:
            memory_id = row.key.removeprefix(keys.doc_prefix)
            sampled[memory_id] = Sampled(memory_id, as_text(row.fields.get("content")))
    return list(sampled.values())


async def segment(redis: Redis, keys: Keys, texts: Sequence[str]) -> dict[str, list[str]]:
    """The Han runs of ``texts`` segmented into words by the server, as the index does."""
    runs = list(dict.fromkeys(run for text in texts for run in han_runs(text)))
    if not runs:
        return {}
    with redis_errors("segment Chinese text"):
        async with redis.pipeline(transaction=False) as pipe:
            for run in runs:
                pipe.execute_command(
                    "FT.EXPLAINCLI", keys.index_alias, run, "LANGUAGE", "chinese", "DIALECT", "2"
                )
            replies = await pipe.execute()
    return {run: parse_explain(lines) or [run] for run, lines in zip(runs, replies, strict=True)}


def words_of(text: str, segmented: dict[str, list[str]]) -> list[str]:
    """The index's words of ``text``, in order, each once (stopwords left out)."""
    words = [w for w in word_terms(text) if not w.startswith('"')]
    for run in han_runs(text):
        words.extend(segmented.get(run) or [run])
    return list(dict.fromkeys(words))


def rare_words_query(words: Sequence[str], frequency: Counter[str], size: int = QUERY_WORDS) -> str:
    """The ``size`` rarest of ``words`` (fewest memories hold them; the longer first), in
    their order in the text."""
    rank = {w: n for n, w in enumerate(words)}
    rarest = sorted(words, key=lambda w: (frequency[w], -len(w), rank[w]))[:size]
    return " ".join(sorted(rarest, key=rank.__getitem__))


async def run_self(
    redis: Redis,
    keys: Keys,
    search: Search,
    count: int,
    *,
    viewer: str,
    k: int = 10,
    mode: SearchMode = "hybrid",
    llm: LLMClient | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Sample ``count`` memories, search for each with a query made from it, and report
    whether (and how high) it was found."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SAMPLE:
        raise InvalidArgument(f"the sample is from 1 to {MAX_SAMPLE:,} memories, got {count!r}")
    check_run(k, mode)
    rng = random.Random(seed)
    pool = await sample_memories(redis, keys, max(count, BACKGROUND), viewer=viewer, rng=rng)
    chosen = pool[:count]
    segmented = await segment(redis, keys, [m.content for m in pool])
    frequency: Counter[str] = Counter()
    for memory in pool:
        frequency.update(words_of(memory.content, segmented))
    notes = [f"{len(chosen)} memories sampled; rarity counted in {len(pool)}"]
    if llm is not None:
        notes.append(f"queries written by {llm.model}")
    scores: list[Scores] = []
    missed: list[Missed] = []
    times: list[float] = []
    fallback = 0
    for n, memory in enumerate(chosen, 1):
        query = await _llm_query(llm, memory.content) if llm is not None else None
        if not query:
            fallback += llm is not None
            words = words_of(memory.content, segmented)
            query = rare_words_query(words, frequency) if words else memory.content[:200]
        t0 = time.perf_counter()
        hits = await search(query, as_agent=viewer or None, top_k=k, mode=mode)
        times.append((time.perf_counter() - t0) * 1000)
        s = score([(h.id, h.source) for h in hits], [memory.id], (), k)
        scores.append(s)
        if not s.hit:
            missed.append(Missed(n, query, (memory.id,)))
        if progress is not None:
            progress(n, len(chosen))
    if fallback:
        notes.append(f"{fallback} queries from rare words: the LLM failed")
    if not chosen:
        notes.append("no memory to sample: none is indexed yet (is a worker running?)")
    return report("self", mode, k, scores, {}, missed, times, notes)


async def _llm_query(llm: LLMClient, content: str) -> str | None:
    """The LLM's question for a memory; None when it fails (rare words are used then)."""
    try:
        text = await llm.complete_text(_LLM_PROMPT, content[:2000], max_tokens=80)
    except ProviderError:
        return None
    question = " ".join(text.split())[:500]
    return question or None
