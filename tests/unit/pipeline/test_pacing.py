"""A worker's refine share (``pipeline.pacing.RefinePace``)."""

from __future__ import annotations

import pytest

from hindsight_redis.pipeline.pacing import RefinePace


def _refine_seconds(share: float, rounds: int, round_s: float, step_s: float) -> float:
    """Refine time a worker spends over ``rounds`` ingest rounds with a backlog waiting."""
    pace, spent = RefinePace(share), 0.0
    for _ in range(rounds):
        pace.ingested(round_s)
        while pace.due:  # as the worker does between two rounds
            pace.refined(step_s)
            spent += step_s
    return spent


@pytest.mark.parametrize("share", [0.1, 0.25, 0.5])
def test_refining_takes_its_share_of_the_time_while_a_backlog_waits(share: float) -> None:
    rounds, round_s, step_s = 1000, 0.1, 0.08
    refine_s = _refine_seconds(share, rounds, round_s, step_s)
    taken = refine_s / (refine_s + rounds * round_s)
    assert share - 0.02 <= taken <= share + 0.02


def test_no_share_never_refines_and_a_whole_share_always_does() -> None:
    assert _refine_seconds(0.0, 100, 0.1, 0.08) == 0.0
    pace = RefinePace(1.0)
    pace.ingested(0.1)
    pace.refined(5.0)
    assert pace.due


def test_a_long_burst_banks_at_most_a_second_of_refining() -> None:
    pace = RefinePace(0.5)
    pace.ingested(60.0)  # a minute of backlog
    steps = 0
    while pace.due:
        pace.refined(0.125)
        steps += 1
    assert steps == 8  # not 480: ingest is never paused for long


def test_a_share_outside_0_and_1_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        RefinePace(1.5)
