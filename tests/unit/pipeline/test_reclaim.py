"""Reclaimed entries run in small batches, then alone (``reading.reclaimed_chunks``)."""

from __future__ import annotations

from hindsight_redis.pipeline.reading import reclaimed_chunks


def test_second_deliveries_run_in_sixteenths_of_a_batch_and_later_ones_alone() -> None:
    reclaimed = [(f"e{n}", 2) for n in range(40)] + [("x", 3), ("y", 5)]
    chunks = reclaimed_chunks(reclaimed, batch_size=256, max_deliveries=5)
    assert [len(c) for c in chunks] == [16, 16, 8, 1, 1]
    assert chunks[-2:] == [["x"], ["y"]]  # the likeliest culprits run last, alone
    assert [e for c in chunks for e in c] == [f"e{n}" for n in range(40)] + ["x", "y"]


def test_the_last_allowed_delivery_runs_alone_and_tiny_batches_split_to_one() -> None:
    reclaimed = [("a", 2), ("b", 2)]
    assert reclaimed_chunks(reclaimed, batch_size=256, max_deliveries=2) == [["a"], ["b"]]
    assert reclaimed_chunks(reclaimed, batch_size=8, max_deliveries=5) == [["a"], ["b"]]
    assert reclaimed_chunks([], batch_size=256, max_deliveries=5) == []
