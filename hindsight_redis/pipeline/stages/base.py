"""The stage protocol every pipeline step implements.

A worker reads a batch of stream entries, turns each into a ``Candidate``,
and passes the batch through its stages in order (the trust checks, then
rules, score, summarize, embed, dedup). A stage mutates candidates in place:
it may replace ``content`` (keeping ``original``), set scores or the
embedding, drop a candidate by calling ``drop()`` with a reason, or hold it
for review (``hold()``). Dropped and held candidates are skipped by later
stages. The consumer then commits every candidate atomically.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.providers.spend import charged_to

Result = TypeVar("Result")


@dataclass(slots=True)
class Candidate:
    """One write moving through the pipeline."""

    entry_id: str
    event: MemoryEvent
    content: str
    original: str | None = None
    write_score: float | None = None
    score_reason: str | None = None
    embedding: np.ndarray | None = None
    drop_reason: str | None = None
    drop_detail: str = ""
    hold_reason: str | None = None
    merge_into: str | None = None
    conflicts_with: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    counters: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> bool:
        """True once a stage dropped this candidate."""
        return self.drop_reason is not None

    @property
    def held(self) -> bool:
        """True once a stage held this candidate for review."""
        return self.hold_reason is not None

    @property
    def alive(self) -> bool:
        """True while the candidate is still headed for the index."""
        return self.drop_reason is None and self.merge_into is None and self.hold_reason is None

    def drop(self, reason: str, detail: str = "") -> None:
        """Drop the candidate.

        ``reason`` is a stable counter name ``"<layer>:<rule>"`` (``"rule:ack"``,
        ``"score:low"``); ``detail`` explains this case (``"0.31: small talk"``).
        """
        self.drop_reason = reason
        self.drop_detail = detail

    def hold(self, reason: str) -> None:
        """Hold the candidate for review: it is stored apart (``Keys.held``), not indexed,
        until a person approves or rejects it. ``reason``: ``"poisoning:override (...)"``."""
        self.hold_reason = reason

    def count(self, counter: str) -> None:
        """Ask the commit to increment a stats counter (e.g. ``"fallback:scorer"``)."""
        self.counters.append(counter)


@runtime_checkable
class Stage(Protocol):
    """A pipeline step that processes a batch of candidates in place."""

    name: str

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Process the alive candidates of ``batch``; skip the others."""
        ...


def alive(batch: Sequence[Candidate]) -> list[Candidate]:
    """The candidates of ``batch`` no stage dropped or merged."""
    return [c for c in batch if c.alive]


async def per_namespace(
    stage: str,
    todo: Sequence[Candidate],
    run: Callable[[list[Candidate]], Awaitable[Sequence[Result]]],
) -> list[Result]:
    """``run`` over the candidates of each namespace of ``todo`` (concurrently), its LLM
    calls charged to that namespace and ``stage`` (``providers.spend``); the results
    in ``todo``'s order (``run`` answers one per candidate, in order)."""
    groups: dict[str, list[int]] = {}
    for i, candidate in enumerate(todo):
        groups.setdefault(candidate.event.namespace, []).append(i)

    async def one(namespace: str, indexes: list[int]) -> Sequence[Result]:
        with charged_to(namespace, stage):  # this task's context only
            return await run([todo[i] for i in indexes])

    answers = await asyncio.gather(*(one(ns, ix) for ns, ix in groups.items()))
    results: dict[int, Result] = {}
    for indexes, answer in zip(groups.values(), answers, strict=True):
        results.update(zip(indexes, answer, strict=True))
    return [results[i] for i in range(len(todo))]
