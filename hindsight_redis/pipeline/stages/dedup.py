"""The dedup stage: merge near-duplicates, flag contradictions for review.

For each alive candidate (after ``EmbedStage``) the stage looks up the few
nearest stored active memories of the namespace (one pipelined KNN round trip
for the whole batch) and the earlier candidates of the same batch:

* cosine >= ``DedupSettings.conflict_threshold`` and the ``ConflictJudge`` says
  the two contradict: the id goes to ``candidate.conflicts_with`` (the commit
  flags both for review); this is checked first, so "standup at 9" and
  "standup at 10" are a conflict even when their vectors nearly coincide.
  The gate is low (0.3) because a changed name moves a static vector far
  ("my manager is Bob Smith" / "... Carol Jones": 0.62); the judge itself
  decides, on the few nearest memories only;
* otherwise cosine >= ``DedupSettings.dedup_threshold`` and no fact differs
  (``pipeline.facts``): ``candidate.merge_into`` = that memory's id (the
  commit appends the source and bumps its stats).

A candidate's memory id is its ``event.event_id``. Merges only happen
between memories of the same visibility (and, for private ones, the same
agent), so a private note never disappears into someone else's; and of the
same partition (a ``partition:<name>`` tag, ``models.partition_of``: the
LangGraph store's namespaces), which are never merged nor flagged across.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from redis.asyncio import Redis

from hindsight_redis.core.codec import pack_for_script
from hindsight_redis.core.documents import split_tags
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import partition_of
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.vectors import vector_bytes
from hindsight_redis.errors import ProviderError, redis_errors
from hindsight_redis.index.manager import IndexInfo
from hindsight_redis.language.facts import contradiction, differ, facts_of, may_share_topic
from hindsight_redis.pipeline.stages.base import Candidate, alive
from hindsight_redis.providers.spend import BudgetReached, SpendLedger, charged_to
from hindsight_redis.redis import scripts
from hindsight_redis.settings import DedupSettings, LLMSettings

logger = logging.getLogger(__name__)

_NEIGHBOURS = 5
_LOOKUPS_PER_CALL = 32  # KNN lookups per script call: a call holds Redis for all of them


@runtime_checkable
class ConflictJudge(Protocol):
    """Decides whether a new memory contradicts a close stored one."""

    async def contradicts(self, new: str, old: str) -> bool:
        """True when ``new`` and ``old`` cannot both be true."""
        ...


class HeuristicConflictJudge:
    """Offline judge: contradiction when two texts speak of the same thing and
    disagree on a fact (``pipeline.facts``): a number, time, weekday, month,
    date, relative day, named person or place, version, or a negation.

    "standup is at 9" vs "standup is at 10", "my manager is Bob" vs "my manager
    is Carol", "会议在周二" vs "会议在周四", "alice eats meat" vs "alice does not eat
    meat". Two different sentences on one topic, or one that only adds
    detail, are not a contradiction.
    """

    async def contradicts(self, new: str, old: str) -> bool:
        """True when ``new`` changes a fact of ``old`` (see the class docstring)."""
        return bool(contradiction(new, old))


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
        """The model's verdict on two related texts; the heuristic's when the model fails.

        Texts that share almost no words (``facts.may_share_topic``) are not
        sent to the model: no call is spent on them.
        """
        return (await self.verdict(new, old))[0]

    async def verdict(self, new: str, old: str) -> tuple[bool, str]:
        """``contradicts``, and who decided: ``llm``, ``heuristic`` (texts apart),
        ``heuristic (fallback)`` or ``heuristic (budget)``."""
        if not may_share_topic(new, old):
            return False, "heuristic"
        by = "heuristic (fallback)"
        try:
            answer = await self.llm.complete_json(
                self.SYSTEM,
                f"OLD: {old}\nNEW: {new}",
                '{"contradicts": true|false, "reason": "<short>"}',
            )
            verdict = answer.get("contradicts")
            if isinstance(verdict, bool):
                return verdict, "llm"
            logger.warning("conflict judge answered without a boolean: %r", answer)
        except BudgetReached:
            by = "heuristic (budget)"
        except ProviderError as e:
            logger.warning("conflict judge failed, using heuristic: %s", e)
        return await self.fallback.contradicts(new, old), by


def judge_from_settings(llm: LLMSettings, *, ledger: SpendLedger | None = None) -> ConflictJudge:
    """The LLM judge when ``llm`` names a model for judges (``judge_model``, else
    ``llm_model``; its calls counted in ``ledger``), the heuristic as its fallback;
    else the offline heuristic."""
    model = llm.model_of("judge")
    if not model:
        return HeuristicConflictJudge()
    from hindsight_redis.providers.llm import LLMClient

    client = LLMClient(llm, model=model, ledger=ledger)
    return LLMConflictJudge(client, fallback=HeuristicConflictJudge())


async def judged(judge: ConflictJudge, new: str, old: str) -> tuple[bool, str]:
    """``judge``'s verdict on ``new`` against ``old`` and who gave it (``llm``,
    ``heuristic``, ``heuristic (budget)``...; a judge without ``verdict``: ``heuristic``
    when it is the offline one, else its class name)."""
    verdict = getattr(judge, "verdict", None)
    if verdict is not None:
        answer: tuple[bool, str] = await verdict(new, old)
        return answer
    by = "heuristic" if isinstance(judge, HeuristicConflictJudge) else type(judge).__name__
    return await judge.contradicts(new, old), by


class DedupStage:
    """Marks near-duplicates for merging and contradictions for review."""

    name = "dedup"

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        dedup: DedupSettings,
        index_info: IndexInfo,
        judge: ConflictJudge | None = None,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.dedup = dedup
        self.index_info = index_info
        self.judge = judge or HeuristicConflictJudge()

    async def _stored_neighbours(
        self, todo: Sequence[Candidate]
    ) -> list[list[tuple[str, float, str]]]:
        """(memory id, cosine, content) of the nearest stored memories, per candidate.

        A plain KNN (the index holds one namespace) with the scope checked here:
        a tag pre-filter that matches nearly everything makes RediSearch's
        KNN several times slower, and this runs once per write. The contents
        come with the neighbours (the judge reads most of them); the lookups
        run in Lua (``scripts.neighbours``), ``_LOOKUPS_PER_CALL`` a call, all
        calls in one round trip.
        """
        info = self.index_info
        knn = f"*=>[KNN {_NEIGHBOURS} @{info.vector_field} $BLOB AS __d]"
        vectors = []
        for cand in todo:
            assert cand.embedding is not None
            vectors.append(vector_bytes(cand.embedding, info.datatype))
        with redis_errors("look up near-duplicates"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for first in range(0, len(vectors), _LOOKUPS_PER_CALL):
                    scripts.neighbours.queue(
                        pipe,
                        index_meta=self.keys.index_meta,
                        index=info.alias,
                        query=knn,
                        k=_NEIGHBOURS,
                        vectors=pack_for_script(vectors[first : first + _LOOKUPS_PER_CALL]),
                    )
                replies = await scripts.execute(pipe)
        prefix = self.keys.doc_prefix
        scopes: dict[tuple[Any, Any, Any], tuple[str, str, str]] = {}  # most rows share one
        found: list[list[tuple[str, float, str]]] = []
        for cand, rows in zip(todo, [rows for reply in replies for rows in reply], strict=True):
            scope = self._scope(cand)
            near = []
            for i in range(0, len(rows), 6):
                fields = (rows[i + 2], rows[i + 3], rows[i + 5])
                if fields not in scopes:
                    scopes[fields] = self._row_scope(*fields)
                if scopes[fields] == scope:
                    memory_id = as_text(rows[i]).removeprefix(prefix)
                    cosine = 1.0 - float(as_text(rows[i + 1]) or 1.0)
                    near.append((memory_id, cosine, as_text(rows[i + 4])))
            found.append(near)
        return found

    @staticmethod
    def _scope(candidate: Candidate) -> tuple[str, str, str]:
        """Who may share a memory with this one: (visibility, owner if private, partition)."""
        event = candidate.event
        visibility = event.visibility or "shared"
        owner = event.agent_id if visibility == "private" else ""
        return visibility, owner, partition_of(event.tags)

    @staticmethod
    def _row_scope(visibility: Any, agent_id: Any, tags: Any) -> tuple[str, str, str]:
        """``_scope`` of a stored memory, from its fields as Redis returned them."""
        shown = as_text(visibility) or "shared"
        owner = as_text(agent_id) if shown == "private" else ""
        return shown, owner, partition_of(split_tags(as_text(tags)))

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Set ``merge_into`` / ``conflicts_with`` on the alive candidates of ``batch``."""
        todo = [c for c in alive(batch) if c.embedding is not None]
        if not todo:
            return
        stored = await self._stored_neighbours(todo)
        # Same-batch neighbours: one matrix product instead of pairwise loops. einsum, not
        # BLAS (``@``): after a product this size OpenBLAS's threads spin for ~0.1 s,
        # taking a core from the worker's own process, Redis and the other workers.
        matrix = np.stack([c.embedding for c in todo if c.embedding is not None])
        sims = np.einsum("ik,jk->ij", matrix, matrix)
        # Each row's earlier batch-mates close enough to judge: a mask, so only those few
        # become Python objects (not the whole matrix: quadratic in the batch size).
        threshold = self.dedup.conflict_threshold
        # Mates share the row's scope (numbered) and are still alive: a row is decided
        # before the next, and a merged one is nobody's mate.
        scopes = [self._scope(c) for c in todo]
        numbers = {scope: n for n, scope in enumerate(dict.fromkeys(scopes))}
        scope_numbers = np.array([numbers[scope] for scope in scopes])
        close = np.tril(sims >= threshold, k=-1)
        close &= scope_numbers[:, None] == scope_numbers[None, :]
        living = np.ones(len(todo), dtype=bool)
        for i, (cand, neighbours) in enumerate(zip(todo, stored, strict=True)):
            options = list(neighbours)
            # The nearest earlier batch-mates, as many as the stored neighbours looked up
            # (by decreasing cosine; ties: the earlier first, as a stable sort keeps them).
            # Sorted by numpy: a row has ~120 mates over the low conflict threshold.
            mates = (close[i] & living).nonzero()[0]
            if len(mates):
                cosines = sims[i][mates]
                nearest = (-cosines).argsort(kind="stable")[:_NEIGHBOURS]
                for j, cosine in zip(
                    mates[nearest].tolist(), cosines[nearest].tolist(), strict=True
                ):
                    options.append((todo[j].event.event_id, cosine, todo[j].content))
            options.sort(key=lambda o: -o[1])
            await self._decide(cand, options[: 2 * _NEIGHBOURS])
            living[i] = cand.alive

    async def _decide(self, cand: Candidate, options: list[tuple[str, float, str]]) -> None:
        with charged_to(cand.event.namespace, "judge"):
            await self._decide_charged(cand, options)

    async def _decide_charged(self, cand: Candidate, options: list[tuple[str, float, str]]) -> None:
        for memory_id, sim, content in options:
            if memory_id == cand.event.event_id:
                continue  # a redelivered write finding itself
            if sim < self.dedup.conflict_threshold:
                continue
            # A changed fact makes a contradiction, not a duplicate: merging
            # would lose the new fact. Texts that disagree on a fact are never
            # merged, whatever the judge says.
            contradicts, by = await judged(self.judge, cand.content, content)
            # The outcome names the model when it judged, and the budget when it stopped it.
            if cand.notes.get("judged_by", "heuristic") == "heuristic" or "budget" in by:
                cand.notes["judged_by"] = by
            if contradicts:
                if memory_id not in cand.conflicts_with:
                    cand.conflicts_with.append(memory_id)
                    cand.count("dedup:conflict")
            elif (
                sim >= self.dedup.dedup_threshold
                and not cand.conflicts_with
                and not differ(facts_of(cand.content), facts_of(content))
            ):
                cand.merge_into = memory_id
                cand.count("dedup:merged")
                return
