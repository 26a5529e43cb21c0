"""Latency histograms kept in a Redis hash: the buckets, the bucket of a value, quantiles.

Pure module: no I/O. The workers count each write they index in one field of the
namespace's hash (``Keys.index_latency``): the upper bound of its bucket as text
(``"0.1"``, ... ``"+Inf"``; counts per bucket, not cumulative), and add the seconds to
``"sum"``. Any process reading the hash rebuilds the histogram (``Histogram.of``):
``/metrics`` exports it as a Prometheus histogram, ``stats`` estimates quantiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

INDEX_LATENCY_BUCKETS: tuple[float, ...] = (
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)
"""Upper bounds (seconds) of the write-to-searchable buckets; ``+Inf`` follows."""

SUM_FIELD = "sum"


def bucket_label(bound: float) -> str:
    """The field (and Prometheus ``le``) of the bucket whose upper bound is ``bound``."""
    return "+Inf" if math.isinf(bound) else f"{bound:g}"


def bucket_of(value: float, bounds: tuple[float, ...] = INDEX_LATENCY_BUCKETS) -> str:
    """The field of the bucket counting ``value``: the first bound at or above it."""
    for bound in bounds:
        if value <= bound:
            return bucket_label(bound)
    return bucket_label(math.inf)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Counts per bucket (``counts[i]``: values up to ``bounds[i]``, above the bound before;
    the last: above every bound) and the sum of the values."""

    bounds: tuple[float, ...]
    counts: tuple[int, ...]
    total: float = 0.0

    @classmethod
    def of(
        cls,
        fields: Mapping[str, str | int | float],
        bounds: tuple[float, ...] = INDEX_LATENCY_BUCKETS,
    ) -> Histogram:
        """The histogram a hash of bucket fields holds (fields of other bounds are ignored)."""
        labels = [*(bucket_label(b) for b in bounds), bucket_label(math.inf)]
        counts = tuple(int(float(fields.get(label, 0) or 0)) for label in labels)
        return cls(bounds, counts, float(fields.get(SUM_FIELD, 0.0) or 0.0))

    @property
    def count(self) -> int:
        """How many values were counted."""
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """``(le, values up to it)`` per bucket, ``+Inf`` last: Prometheus's buckets."""
        running, out = 0, []
        for bound, n in zip((*self.bounds, math.inf), self.counts, strict=True):
            running += n
            out.append((bucket_label(bound), running))
        return out

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0..1), interpolated inside its bucket as Prometheus's
        ``histogram_quantile`` does; None when nothing was counted. A quantile in the
        ``+Inf`` bucket is reported as the highest bound (the histogram knows no more)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"a quantile is from 0 to 1, got {q!r}")
        total = self.count
        if total == 0:
            return None
        rank = q * total
        below, lower = 0, 0.0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            if n and below + n >= rank:
                return lower + (bound - lower) * max(rank - below, 0.0) / n
            below, lower = below + n, bound
        return self.bounds[-1] if self.bounds else None
