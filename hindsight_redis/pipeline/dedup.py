"""The dedup stage: merge near-duplicates, flag contradictions for review.

For each alive candidate (after ``EmbedStage``) the stage looks up the few
nearest stored active memories of the namespace (one pipelined KNN round trip
for the whole batch) and the earlier candidates of the same batch:

* cosine >= ``settings.conflict_threshold`` and the ``ConflictJudge`` says
  the two contradict: the id goes to ``candidate.conflicts_with`` (the commit
  flags both for review); this is checked first, so "standup at 9" and
  "standup at 10" are a conflict even when their vectors nearly coincide;
* otherwise cosine >= ``settings.dedup_threshold``: ``candidate.merge_into``
  = that memory's id (the commit appends the source and bumps its stats).

A candidate's memory id is its ``event.event_id``. Merges only happen
between memories of the same visibility (and, for private ones, the same
agent), so a private note never disappears into someone else's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from redis.asyncio import Redis

from hindsight_redis.errors import ProviderError, redis_errors
from hindsight_redis.index import IndexInfo
from hindsight_redis.keys import Keys
from hindsight_redis.pipeline.base import Candidate, alive
from hindsight_redis.resp import NEVER_DECODE, as_text, search_rows
from hindsight_redis.settings import Settings
from hindsight_redis.text import HAN_CLASS

logger = logging.getLogger(__name__)

_NEIGHBOURS = 5
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|can't|don't|doesn't|"
    r"didn't|isn't|aren't|wasn't|weren't|won't|wouldn't|shouldn't|no longer|"
    r"stopped|dislikes?|hates?)\b|[不没別别勿未無无非]",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_AUXILIARIES = frozenset({"do", "does", "did", "is", "are", "was", "were", "will", "would", "be"})
# A word: one Han character, or a run of other letters.
_WORD = re.compile(rf"[{HAN_CLASS}]|[^\W\d_{HAN_CLASS}]+")


@runtime_checkable
class ConflictJudge(Protocol):
    """Decides whether a new memory contradicts a close stored one."""

    async def contradicts(self, new: str, old: str) -> bool:
        """True when ``new`` and ``old`` cannot both be true."""
        ...


class HeuristicConflictJudge:
    """Cheap judge for two texts already known to be close.

    Contradiction only when the two say nearly the same thing in nearly the
    same words (token overlap of at least ``min_overlap``, numbers and
    negations left out) and then differ in a negation or in their numbers:
    "standup is at 9" vs "standup is at 10", "alice eats meat" vs "alice
    does not eat meat". Two different sentences on one topic (common in
    dialogue) are not a contradiction.
    """

    def __init__(self, min_overlap: float = 0.6) -> None:
        self.min_overlap = min_overlap

    async def contradicts(self, new: str, old: str) -> bool:
        """True on a negation flip or changed numbers between two near-identical statements."""
        new_words, old_words = _content_tokens(new), _content_tokens(old)
        if not new_words or not old_words:
            return False
        overlap = len(new_words & old_words) / len(new_words | old_words)
        if overlap < self.min_overlap:
            return False
        if len(_NEGATION.findall(new)) % 2 != len(_NEGATION.findall(old)) % 2:
            return True
        new_numbers, old_numbers = set(_NUMBER.findall(new)), set(_NUMBER.findall(old))
        return bool(new_numbers and old_numbers and new_numbers != old_numbers)


def _content_tokens(text: str) -> set[str]:
    """Lower-cased, lightly stemmed words (each Han character a word).

    Numbers, negations and auxiliaries are left out, so "likes" and "does not
    like" compare as the same statement.
    """
    stripped = _NEGATION.sub(" ", _NUMBER.sub(" ", text.lower()))
    words = set()
    for word in _WORD.findall(stripped):
        if word in _AUXILIARIES:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words


class LLMConflictJudge:
    """Asks an LLM (``providers.llm.LLMClient``); falls back to the heuristic on failure."""

    SYSTEM = (
        "You compare two notes stored in an AI agent's memory. Decide whether "
        "the NEW note contradicts the OLD one: both cannot be true at the same "
        "time (changed fact, preference, number, date, or a negation). A note "
        "that only adds detail does not contradict."
    )

    def __init__(self, llm: Any, fallback: ConflictJudge | None = None) -> None:
        self.llm = llm
        self.fallback = fallback or HeuristicConflictJudge()

    async def contradicts(self, new: str, old: str) -> bool:
        """The model's verdict; the heuristic's when the model fails."""
        try:
            answer = await self.llm.complete_json(
                self.SYSTEM,
                f"OLD: {old}\nNEW: {new}",
                '{"contradicts": true|false, "reason": "<short>"}',
            )
            verdict = answer.get("contradicts")
            if isinstance(verdict, bool):
                return verdict
            logger.warning("conflict judge answered without a boolean: %r", answer)
        except ProviderError as e:
            logger.warning("conflict judge failed, using heuristic: %s", e)
        return await self.fallback.contradicts(new, old)


def judge_from_settings(settings: Settings) -> ConflictJudge:
    """The LLM judge when ``settings.llm_model`` is set (the heuristic as its
    fallback), else the offline heuristic."""
    if not settings.llm_model:
        return HeuristicConflictJudge()
    from hindsight_redis.providers.llm import LLMClient

    return LLMConflictJudge(LLMClient(settings), fallback=HeuristicConflictJudge())


class DedupStage:
    """Marks near-duplicates for merging and contradictions for review."""

    name = "dedup"

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        settings: Settings,
        index_info: IndexInfo,
        judge: ConflictJudge | None = None,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.settings = settings
        self.index_info = index_info
        self.judge = judge or HeuristicConflictJudge()

    async def _stored_neighbours(
        self, todo: Sequence[Candidate]
    ) -> list[list[tuple[str, float, str]]]:
        """(memory id, cosine, content) of the nearest stored memories, per candidate.

        A plain KNN (the index holds one namespace) with the scope checked here:
        a tag pre-filter that matches nearly everything makes RediSearch's
        KNN several times slower, and this runs once per write.
        """
        info = self.index_info
        knn = f"*=>[KNN {_NEIGHBOURS} @{info.vector_field} $BLOB AS __d]"
        with redis_errors("look up near-duplicates"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for cand in todo:
                    assert cand.embedding is not None
                    pipe.execute_command(
                        "FT.SEARCH", info.alias, knn, "PARAMS", "2", "BLOB",
                        cand.embedding.astype(np.float32).tobytes(), "SORTBY", "__d", "ASC",
                        "LIMIT", "0", str(_NEIGHBOURS),
                        "RETURN", "4", "__d", "status", "visibility", "agent_id",
                        "DIALECT", "2", **NEVER_DECODE,
                    )  # fmt: skip
                replies = await pipe.execute()
        found: list[list[tuple[str, float, str]]] = []
        for cand, reply in zip(todo, replies, strict=True):
            scope = self._scope(cand)
            found.append(
                [
                    (
                        row.key.removeprefix(self.keys.doc_prefix),
                        1.0 - float(as_text(row.fields.get("__d")) or 1.0),
                        "",  # fetched below, only for the few close enough to judge
                    )
                    for row in search_rows(reply)
                    if as_text(row.fields.get("status")) == "active"
                    and self._row_scope(row.fields) == scope
                ]
            )
        return await self._with_contents(found)

    async def _with_contents(
        self, found: list[list[tuple[str, float, str]]]
    ) -> list[list[tuple[str, float, str]]]:
        """Fill in the content of neighbours close enough for the judge (one round trip)."""
        threshold = self.settings.conflict_threshold
        wanted = list({m for rows in found for m, sim, _ in rows if sim >= threshold})
        if not wanted:
            return found
        with redis_errors("look up near-duplicates"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for memory_id in wanted:
                    pipe.hget(self.keys.doc(memory_id), "content")
                contents = dict(zip(wanted, await pipe.execute(), strict=True))
        return [
            [(m, sim, as_text(contents.get(m)) if m in contents else c) for m, sim, c in rows]
            for rows in found
        ]

    @staticmethod
    def _scope(candidate: Candidate) -> tuple[str, str]:
        """Who may share a memory with this one: (visibility, owner if private)."""
        event = candidate.event
        visibility = event.visibility or "shared"
        return visibility, event.agent_id if visibility == "private" else ""

    @staticmethod
    def _row_scope(fields: dict[str, Any]) -> tuple[str, str]:
        visibility = as_text(fields.get("visibility")) or "shared"
        return visibility, as_text(fields.get("agent_id")) if visibility == "private" else ""

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Set ``merge_into`` / ``conflicts_with`` on the alive candidates of ``batch``."""
        todo = [c for c in alive(batch) if c.embedding is not None]
        if not todo:
            return
        stored = await self._stored_neighbours(todo)
        # Same-batch neighbours: one matrix product instead of pairwise loops.
        matrix = np.stack([c.embedding for c in todo if c.embedding is not None])
        sims = matrix @ matrix.T
        scopes = [self._scope(c) for c in todo]
        threshold = self.settings.conflict_threshold
        for i, (cand, neighbours) in enumerate(zip(todo, stored, strict=True)):
            options = list(neighbours)
            for j in np.flatnonzero(sims[i, :i] >= threshold):
                prev = todo[j]
                if prev.alive and scopes[j] == scopes[i]:
                    options.append((prev.event.event_id, float(sims[i, j]), prev.content))
            options.sort(key=lambda o: -o[1])
            await self._decide(cand, options)

    async def _decide(self, cand: Candidate, options: list[tuple[str, float, str]]) -> None:
        for memory_id, sim, content in options:
            if memory_id == cand.event.event_id:
                continue  # a redelivered write finding itself
            if sim < self.settings.conflict_threshold:
                continue
            # Near-identical texts that differ in a number or a negation are
            # a contradiction, not a duplicate: merging would lose the change.
            if await self.judge.contradicts(cand.content, content):
                if memory_id not in cand.conflicts_with:
                    cand.conflicts_with.append(memory_id)
                    cand.count("dedup:conflict")
            elif sim >= self.settings.dedup_threshold and not cand.conflicts_with:
                cand.merge_into = memory_id
                cand.count("dedup:merged")
                return
