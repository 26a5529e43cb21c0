"""The soak benchmark's slope test: a bounded series passes, a leak fails, noise passes."""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.soak.verdict import Check, grows, second_half, slope, trend, verdict  # noqa: E402


def series(
    f: Callable[[float], float], seconds: float = 1800, every: float = 10
) -> list[tuple[float, float]]:
    return [(t * every, f(t * every)) for t in range(int(seconds / every) + 1)]


def test_slope_is_the_least_squares_line() -> None:
    assert slope([(0, 1), (1, 3), (2, 5)]) == 2
    assert slope([(0, 4)]) == 0 and slope([]) == 0 and slope([(1, 2), (1, 5)]) == 0
    assert second_half([(0, 0), (4, 0), (5, 0), (10, 0)]) == [(5, 0), (10, 0)]


def test_a_pool_that_fills_then_stays_flat_passes() -> None:
    # Warm-up in the first half (connections opening, caches filling) is not judged.
    pool = series(lambda t: min(40.0, 10 + t / 10))
    t = trend(pool)
    assert t.slope_per_s == 0 and t.mean == 40 and not grows(t, Check(0.10, 3))


def test_a_slow_leak_fails_and_its_growth_is_stated_over_the_run() -> None:
    # 300 MB of RSS leaking 5 MB a minute: 150 MB over half an hour, 50% of the mean.
    leak = series(lambda t: 300 + 5 * t / 60)
    t = trend(leak)
    assert math.isclose(t.slope_per_s * 60, 5) and math.isclose(t.growth, 150)
    assert grows(t, Check(0.10, 10))


def test_noise_and_a_saw_tooth_below_the_bounds_pass() -> None:
    rng = random.Random(3)
    noisy = series(lambda t: 500 + rng.gauss(0, 15))  # RSS jitter of a busy host
    tooth = series(lambda t: 2000 + (t % 30) * 20)  # a sweep back to the cap every 30 s
    assert not grows(trend(noisy), Check(0.10, 10))
    assert not grows(trend(tooth), Check(0.10, 600))


def test_a_small_count_needs_to_pass_the_floor_as_well() -> None:
    # 2 connections to 4: 100% relative, but under a floor of 3 connections.
    few = series(lambda t: 2 if t < 1700 else 4)
    t = trend(few)
    assert t.relative > 0.10 and not grows(t, Check(0.10, 3))
    zero_then_some = series(lambda t: 0 if t < 1500 else t - 1500)
    assert grows(trend(zero_then_some), Check(0.10, 50))


def test_verdict_judges_named_series_and_prefixes_and_reports_the_rest() -> None:
    flat, leak = series(lambda t: 100.0), series(lambda t: 100 + t)
    trends, failed = verdict(
        {
            "rss_mb.worker-0": leak,
            "rss_mb.worker-1": flat,
            "connections": flat,
            "keys.outcome": leak,
        },
        {"rss_mb.": Check(0.10, 10), "connections": Check(0.10, 3)},
    )
    assert failed == ["rss_mb.worker-0"]  # keys.outcome grows, but no check names it
    assert set(trends) == {"rss_mb.worker-0", "rss_mb.worker-1", "connections", "keys.outcome"}
