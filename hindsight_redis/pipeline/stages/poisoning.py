"""The poisoning stage: writes that instruct their future readers are held for review.

It runs first, before the quality filters and whether or not they are enabled
(``filters_enabled=false`` never turns it off): a write that would be dropped
as low-value is still held if it tries to instruct its readers, so that it
shows in the review. ``TrustSettings.poisoning`` says what becomes of one:
``hold`` (stored apart, ``Keys.held``, until ``approve`` or ``reject``),
``drop`` (reason ``poisoning``) or ``keep`` (indexed; counted as
``kept:poisoning``). A write the write edge already judged (``MemoryEvent.hold``,
e.g. a secret under the ``hold`` policy) is held with that reason whatever the
policy; a write a person approved (``MemoryEvent.reviewed``) is never held again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from hindsight_redis.pipeline.stages.base import Candidate, alive, per_namespace
from hindsight_redis.trust.poisoning import PoisonJudge

DROPPED = "poisoning"
"""The drop reason of a poisoning write under the ``drop`` policy."""
FALLBACK = "fallback:poisoning"
"""Counted when the heuristic stood in for a failed model."""
KEPT = "kept:poisoning"
"""Counted when a poisoning write is indexed anyway (the ``keep`` policy)."""


class PoisoningStage:
    """Pipeline stage ``poisoning``: holds (or drops, or counts) writes that instruct readers."""

    name = "poisoning"

    def __init__(self, judge: PoisonJudge, *, policy: Literal["hold", "drop", "keep"]) -> None:
        """Judge with ``judge``; act on poisoning as ``policy`` says."""
        self.judge = judge
        self.policy = policy

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Hold the alive candidates of ``batch`` the write edge or the judge holds."""
        todo = []
        for candidate in alive(batch):
            event = candidate.event
            if event.reviewed:
                continue
            if event.hold:
                candidate.hold(event.hold)
            else:
                todo.append(candidate)
        if not todo:
            return
        verdicts = await per_namespace(
            "poisoning", todo, lambda group: self.judge.judge([c.content for c in group])
        )
        for candidate, verdict in zip(todo, verdicts, strict=True):
            if verdict.fallback:
                candidate.count(FALLBACK)
            if verdict.budget:
                candidate.notes["poisoning_by"] = "heuristic (budget)"
            if not verdict.poisoning:
                continue
            candidate.notes["poisoning"] = verdict.reason
            if self.policy == "hold":
                candidate.hold(verdict.reason)
            elif self.policy == "drop":
                candidate.drop(DROPPED, verdict.reason.removeprefix("poisoning:"))
            else:
                candidate.count(KEPT)
