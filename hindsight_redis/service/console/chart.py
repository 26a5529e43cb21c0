"""The console's chart: counters sampled over time, drawn as an inline SVG (pure).

The counters in Redis are totals; ``History`` keeps the console's samples of
them (one per ``sample_s``, the last ``keep`` of each namespace) and
``rate_chart`` draws accepted, indexed and dropped writes per second
between samples.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from dataclasses import dataclass

from hindsight_redis.ops.stats import QueueState

SERIES = (("accepted", "#2f6fd6"), ("indexed", "#2a9d55"), ("dropped", "#d64545"))


@dataclass(frozen=True, slots=True)
class Sample:
    """The totals of one namespace at one time."""

    at: float
    accepted: int
    indexed: int
    dropped: int

    @classmethod
    def of(cls, state: QueueState, at: float | None = None) -> Sample:
        """A sample of a namespace's state."""
        return cls(
            at=time.time() if at is None else at,
            accepted=state.accepted,
            indexed=state.counters.get("indexed", 0),
            dropped=sum(state.dropped.values()),
        )


class History:
    """The last ``keep`` samples of each namespace."""

    def __init__(self, keep: int = 720) -> None:
        self.keep = keep
        self._samples: dict[str, deque[Sample]] = {}

    def add(self, namespace: str, sample: Sample) -> None:
        """Record a sample."""
        self._samples.setdefault(namespace, deque(maxlen=self.keep)).append(sample)

    def of(self, namespace: str) -> list[Sample]:
        """A namespace's samples, oldest first."""
        return list(self._samples.get(namespace, ()))


def rate_chart(samples: list[Sample], *, width: int = 560, height: int = 170) -> str:
    """Writes per second between samples, one line per series, as an SVG element."""
    if len(samples) < 2:
        return (
            "<p class='muted'>Collecting: the chart fills in while the console runs "
            "(one sample every few seconds).</p>"
        )
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in SERIES}
    for before, after in itertools.pairwise(samples):
        span = max(after.at - before.at, 1e-6)
        for name, _ in SERIES:
            delta = max(getattr(after, name) - getattr(before, name), 0)
            rates[name].append((after.at, delta / span))
    top = max((r for points in rates.values() for _, r in points), default=0.0) or 1.0
    start, end = samples[0].at, samples[-1].at
    left, bottom = 44, height - 22
    span = max(end - start, 1e-6)

    def x(t: float) -> float:
        return left + (width - left - 8) * (t - start) / span

    def y(rate: float) -> float:
        return bottom - (bottom - 10) * rate / top

    lines = []
    for name, color in SERIES:
        points = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in rates[name])
        lines.append(
            f"<polyline class='series-{name}' fill='none' stroke='{color}' stroke-width='2' "
            f"points='{points}'/>"
        )
    legend = "".join(
        f"<text x='{left + 10 + 90 * i}' y='{height - 4}' fill='{color}' font-size='12'>"
        f"{name}/s</text>"
        for i, (name, color) in enumerate(SERIES)
    )
    minutes = (end - start) / 60
    return (
        f"<svg class='rates' xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' role='img' aria-label='writes per second'>"
        f"<line x1='{left}' y1='{bottom}' x2='{width - 8}' y2='{bottom}' stroke='#999'/>"
        f"<line x1='{left}' y1='10' x2='{left}' y2='{bottom}' stroke='#999'/>"
        f"<text x='2' y='16' font-size='11'>{top:.1f}/s</text>"
        f"<text x='2' y='{bottom}' font-size='11'>0</text>"
        f"<text x='{width - 120}' y='{height - 4}' font-size='11' fill='#666'>"
        f"last {minutes:.1f} min</text>{''.join(lines)}{legend}</svg>"
    )
