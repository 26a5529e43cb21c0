"""Refine steps between ingest rounds (``pipeline.refining.Refining.after_round``): the
share's credit is spent in short steps, a bounded time after each round, beside the next
rounds when the round had writes."""

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
        await refine.finish()
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
            await refine.finish()  # the steps run beside the next round: here, before it

    asyncio.run(rounds())
    refine_s = clock.now - 1000.0 - ingest_s
    assert 0.45 <= refine_s / (refine_s + ingest_s) <= 0.55


class _SlowConsumer:
    """A namespace whose refine steps wait for ``release`` (or raise ``error``)."""

    def __init__(self) -> None:
        self.may_refine = True
        self.started = 0
        self.release = asyncio.Event()
        self.error: Exception | None = None

    async def refine(self, most: int | None = None, *, between_rounds: bool = False) -> int:
        self.started += 1
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return 0


def test_a_busy_rounds_steps_run_beside_the_next_rounds() -> None:
    consumer = _SlowConsumer()
    refine = Refining(_Served(consumer), share=0.1, multi=False, stopping=asyncio.Event())  # type: ignore[arg-type]

    async def rounds() -> None:
        # A round with writes: its step starts, and the next round is read at once.
        started = refine.after_round(busy=True, behind=False, beside=True)
        assert await asyncio.wait_for(started, 1) is False
        await asyncio.sleep(0)
        assert consumer.started == 1
        # Another busy round while that step runs: no second step.
        await refine.after_round(busy=True, behind=False, beside=True)
        await asyncio.sleep(0)
        assert consumer.started == 1
        # An idle round waits for the running step before its own.
        idle = asyncio.create_task(refine.after_round(busy=False, behind=False, beside=True))
        await asyncio.sleep(0.01)
        assert not idle.done()
        consumer.release.set()
        assert await asyncio.wait_for(idle, 1) is False  # nothing pending
        # A step's failure is raised by the round after it.
        consumer.error = ConnectionError("redis down")
        await refine.after_round(busy=True, behind=False, beside=True)
        await asyncio.sleep(0.01)
        with pytest.raises(ConnectionError):
            await refine.after_round(busy=True, behind=False, beside=True)

    asyncio.run(rounds())


def test_cancel_stops_a_running_step() -> None:
    consumer = _SlowConsumer()
    refine = Refining(_Served(consumer), share=0.1, multi=False, stopping=asyncio.Event())  # type: ignore[arg-type]

    async def stop() -> None:
        await refine.after_round(busy=True, behind=False, beside=True)
        await asyncio.sleep(0)
        await asyncio.wait_for(refine.cancel(), 1)  # the step never released: cancelled
        await refine.finish()  # nothing left running

    asyncio.run(stop())
    assert consumer.started == 1


def test_the_shares_steps_run_their_model_at_normal_priority(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the share owes runs at normal priority (``providers.priority``); the short step a
    round that keeps up gets does not, and neither does anything after the steps."""
    from hindsight_redis.providers.contextual import MiniLMEmbedder
    from hindsight_redis.providers.priority import at_normal_priority, normal_priority

    clock = _Clock()
    monkeypatch.setattr(refining.time, "monotonic", clock)
    seen: list[bool] = []

    class _Recording(_Consumer):
        async def refine(self, most: int | None = None, *, between_rounds: bool = False) -> int:
            seen.append(at_normal_priority())
            return await super().refine(most, between_rounds=between_rounds)

    owed = Refining(
        _Served(_Recording(clock, 0.01)), share=0.1, multi=False, stopping=asyncio.Event()
    )  # type: ignore[arg-type]
    owed.pace.credit_s = 0.02
    idle = Refining(
        _Served(_Recording(clock, 0.01)), share=0.0, multi=False, stopping=asyncio.Event()
    )  # type: ignore[arg-type]

    async def rounds() -> None:
        await owed.after_round(busy=True, behind=True, beside=True)
        await owed.finish()
        assert seen and all(seen)  # the share's steps
        seen.clear()
        await idle.after_round(busy=True, behind=False, beside=True)
        await idle.finish()
        assert seen == [False]  # the keep-up step

    asyncio.run(rounds())
    assert not at_normal_priority()
    model = MiniLMEmbedder(low_priority=True)
    assert model._thread() is not None  # its nice-19 thread
    with normal_priority():
        assert model._thread() is None  # asyncio's default pool, normal priority
