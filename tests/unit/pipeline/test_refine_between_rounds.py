"""Refine steps between ingest rounds (``pipeline.refining.Refining.after_round``): the
share's credit is spent in short steps, a bounded time after each round."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hindsight_redis.pipeline import refining
from hindsight_redis.pipeline.refining import Refining


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Consumer:
    """A namespace with memories waiting: each step takes ``step_s`` per memory."""

    def __init__(self, clock: _Clock, step_s: float) -> None:
        self.clock, self.step_s = clock, step_s
        self.may_refine = True
        self.steps: list[int | None] = []

    async def refine(self, most: int | None = None, *, between_rounds: bool = False) -> int:
        done = most or 8
        self.steps.append(most)
        self.clock.now += self.step_s * done
        return done


class _Served:
    def __init__(self, consumer: _Consumer) -> None:
        self.consumer = consumer

    def rotation(self, turn: int) -> list[Any]:
        return [self.consumer]


@pytest.mark.parametrize("behind", [False, True])
def test_a_round_is_followed_by_short_steps_for_a_bounded_time(
    monkeypatch: pytest.MonkeyPatch, behind: bool
) -> None:
    clock = _Clock()
    monkeypatch.setattr(refining.time, "monotonic", clock)
    consumer = _Consumer(clock, step_s=0.01)
    refine = Refining(_Served(consumer), share=0.1, multi=False, stopping=asyncio.Event())  # type: ignore[arg-type]
    refine.pace.credit_s = 1.0  # a second of refining owed: a long burst's

    async def one_round() -> float:
        started = clock.now
        clock.now += 0.1  # the round
        await refine.after_round(busy=True, behind=behind, beside=True)
        return clock.now - started - 0.1

    spent = asyncio.run(one_round())
    assert consumer.steps and set(consumer.steps) == {2}  # short steps, even when behind
    assert spent < refining._ROUND_REFINE_S + 0.02 + 1e-9  # at most one step over
    assert refine.pace.credit_s > 0.5  # the rest is kept for the next rounds


def test_the_share_is_kept_when_rounds_earn_more_than_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock()
    monkeypatch.setattr(refining.time, "monotonic", clock)
    consumer = _Consumer(clock, step_s=0.01)
    refine = Refining(_Served(consumer), share=0.5, multi=False, stopping=asyncio.Event())  # type: ignore[arg-type]
    ingest_s = 0.0

    async def rounds() -> None:
        nonlocal ingest_s
        for _ in range(200):
            clock.now += 0.4  # long rounds: each earns 0.4 s of refining at share 0.5
            ingest_s += 0.4
            await refine.after_round(busy=True, behind=True, beside=True)

    asyncio.run(rounds())
    refine_s = clock.now - 1000.0 - ingest_s
    assert 0.45 <= refine_s / (refine_s + ingest_s) <= 0.55
