"""The soak's verdict: which sampled series grow without bound (pure, standard library only).

A series is a list of ``(t, value)`` samples. ``trend`` fits a least-squares line over the
second half of the run (the first half holds the warm-up: models loading, pools filling,
``max_active`` not reached yet) and states its growth as the line extrapolated over the
whole run, relative to the second half's mean. A bounded series (a pool, a cache, a capped
count) shows a slope near zero there; a leak shows a slope that does not shrink with time.

The threshold: a series ``grows`` when that extrapolated growth exceeds both ``relative``
(10% of the mean by default: a leak of 10% per half hour doubles in five hours, the
hours-long failures the issue describes; the host's noise on RSS and counts stays well
under it once warm) and ``floor``, an absolute step below which a change is noise whatever
the mean (a connection or two, a few file descriptors, a few MB of RSS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Trend:
    """The second half's line of one series, and what it says."""

    slope_per_s: float
    mean: float
    growth: float  # slope x the run's duration: the rise the line predicts over a run
    relative: float  # growth / mean (0 when the mean is 0 and nothing grew)
    samples: int


@dataclass(frozen=True)
class Check:
    """One series held to a bound: the relative growth allowed and the absolute floor."""

    relative: float = 0.10
    floor: float = 0.0


def slope(points: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of ``points`` (value per unit of t); 0 for fewer than 2."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mt) * (v - mv) for t, v in points) / var


def second_half(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The samples at or after the run's middle (by time)."""
    if not points:
        return []
    first, last = points[0][0], points[-1][0]
    middle = first + (last - first) / 2
    return [p for p in points if p[0] >= middle]


def trend(points: Sequence[tuple[float, float]]) -> Trend:
    """The line over the second half of ``points``, its growth stated over the whole run."""
    half = second_half(points)
    duration = points[-1][0] - points[0][0] if points else 0.0
    per_s = slope(half)
    mean = sum(v for _, v in half) / len(half) if half else 0.0
    growth = per_s * duration
    relative = growth / abs(mean) if mean else (0.0 if growth <= 0 else float("inf"))
    return Trend(per_s, mean, growth, relative, len(half))


def grows(t: Trend, check: Check) -> bool:
    """Whether ``t`` rises beyond ``check``: both its relative bound and its floor."""
    return t.growth > check.floor and t.relative > check.relative


def verdict(
    series: dict[str, Sequence[tuple[float, float]]], checks: dict[str, Check]
) -> tuple[dict[str, Trend], list[str]]:
    """The trend of every series, and the names of the checked ones that grow (sorted).

    ``checks`` maps a series' name, or a prefix of names ending in ``.``, to its bound; a
    series no check names is reported, not judged.
    """
    trends = {name: trend(points) for name, points in series.items()}
    failed = []
    for name, t in trends.items():
        check = checks.get(name) or next(
            (c for prefix, c in checks.items() if prefix.endswith(".") and name.startswith(prefix)),
            None,
        )
        if check is not None and grows(t, check):
            failed.append(name)
    return trends, sorted(failed)
