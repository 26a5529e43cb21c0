"""Memory health: how well a namespace's memory keeps, per namespace, in numbers.

Rates are ratios of the exact counters the workers and reviews keep in the stats hash
(``merged``, ``dropped:<reason>``, ``conflicts``, ``resolved:<keep>``... each counted in
the script of its event): the merge rate (merged / processed), the drop rate (dropped /
processed, also per reason), the conflict rate (indexed writes flagged as contradicting
a memory / indexed), the supersede rate (reviews that kept the new memory / reviews).
Counts: open conflicts (active memories flagged), held writes waiting for review. The
stale fraction comes from a sample (``lifecycle.staleness``), the refine lag from the
index, the write-to-searchable latency from the workers' histogram (``core.histogram``).

``health_of`` is ``stats``' ``health`` section; ``health_families`` the Prometheus
series; ``StaleCache`` keeps ``/metrics`` from sampling a namespace more than once a
minute.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.lifecycle.review import KEEP_CHOICES
from hindsight_redis.lifecycle.staleness import StaleSample, sample_staleness
from hindsight_redis.ops.stats import QueueState


def ratio(part: int, whole: int) -> float | None:
    """``part / whole``; None when ``whole`` is 0 (no rate yet, not a rate of 0)."""
    return part / whole if whole else None


def health_of(state: QueueState, stale: StaleSample | None, now: float) -> dict[str, Any]:
    """The namespace's health as plain data (``stats()["health"]``; README, Memory health).

    Rates are None until their denominator is counted; ``stale`` is None when the sweep
    threshold is off or there is no index.
    """
    counters = state.counters
    processed, indexed = counters.get("processed", 0), counters.get("indexed", 0)
    dropped = state.dropped
    resolved = {keep: counters.get(f"resolved:{keep}", 0) for keep in KEEP_CHOICES}
    latency = state.index_latency
    return {
        "merge_rate": ratio(counters.get("merged", 0), processed),
        "drop_rate": ratio(sum(dropped.values()), processed),
        "drop_rate_by_reason": {
            reason: ratio(n, processed) for reason, n in sorted(dropped.items())
        },
        "conflict_rate": ratio(counters.get("conflicts", 0), indexed),
        "conflicts_flagged": counters.get("conflicts", 0),
        "conflicts_open": state.conflicts_open,
        "conflicts_resolved": resolved,
        "resolutions_undone": counters.get("resolutions_undone", 0),
        "supersede_rate": ratio(resolved["new"], sum(resolved.values())),
        "held_waiting": state.held_waiting,
        "stale": None if stale is None else stale.as_dict(),
        "refine_lag_s": state.refine_lag_s(now) if state.refine_pending is not None else None,
        "index_latency": {
            "count": latency.count,
            "sum_s": latency.total,
            "p50_s": latency.quantile(0.5),
            "p99_s": latency.quantile(0.99),
            "buckets": dict(latency.cumulative()),
        },
    }


async def read_staleness(
    redis: Redis, keys: Keys, policy: RetentionPolicy | None, threshold: float | None
) -> StaleSample | None:
    """The namespace's stale sample; None when there is no threshold (or policy) to judge by."""
    if policy is None or threshold is None:
        return None
    return await sample_staleness(redis, keys, policy, threshold)


class StaleCache:
    """Stale samples by namespace, each re-read at most every ``every_s`` and at most
    ``per_read`` of them per ``refresh`` (the oldest first): a scrape of many namespaces
    costs Redis a bounded amount."""

    def __init__(
        self,
        policy: RetentionPolicy,
        threshold: float,
        *,
        every_s: float = 60.0,
        per_read: int = 20,
    ) -> None:
        self.policy = policy
        self.threshold = threshold
        self.every_s = every_s
        self.per_read = per_read
        self._seen: dict[str, tuple[float, StaleSample | None]] = {}

    async def refresh(self, redis: Redis, states: Sequence[QueueState], prefix: str) -> None:
        """Re-sample the namespaces whose sample is missing or older than ``every_s``."""
        now = time.monotonic()
        due = [
            s.namespace
            for s in states
            if s.memories is not None
            and now - self._seen.get(s.namespace, (-float("inf"), None))[0] >= self.every_s
        ]
        due.sort(key=lambda n: self._seen.get(n, (-float("inf"), None))[0])
        for namespace in due[: self.per_read]:
            keys = Keys(prefix, namespace)
            sample = await sample_staleness(redis, keys, self.policy, self.threshold)
            self._seen[namespace] = (time.monotonic(), sample)

    def get(self, namespace: str) -> StaleSample | None:
        """The namespace's last sample; None when none was read."""
        return self._seen.get(namespace, (0.0, None))[1]


def health_families(
    states: Sequence[QueueState], stale: dict[str, StaleSample | None], now: float
) -> Iterator[Metric]:
    """The Prometheus series of memory health, by namespace (README, Memory health)."""
    health = {s.namespace: health_of(s, stale.get(s.namespace), now) for s in states}
    for name, doc in _RATES.items():
        yield _gauge(f"hindsight_{name}", doc, ((n, h[name]) for n, h in health.items()))
    drops = GaugeMetricFamily(
        "hindsight_drop_rate_by_reason",
        "Share of processed writes the filters dropped, by reason.",
        labels=["namespace", "reason"],
    )
    for namespace, h in health.items():
        for reason, rate in h["drop_rate_by_reason"].items():
            if rate is not None:
                drops.add_metric([namespace, reason], rate)
    yield drops
    resolved = CounterMetricFamily(
        "hindsight_conflicts_resolved",
        "Conflicts resolved by review, by decision (keep new, old or both).",
        labels=["namespace", "keep"],
    )
    for namespace, h in health.items():
        for keep, n in h["conflicts_resolved"].items():
            resolved.add_metric([namespace, keep], n)
    yield resolved
    for name, key, doc in (
        ("conflicts_flagged", "conflicts_flagged", "Indexed writes flagged as contradicting."),
        ("resolutions_undone", "resolutions_undone", "Conflict resolutions undone (restore)."),
    ):
        counter = CounterMetricFamily(f"hindsight_{name}", doc, labels=["namespace"])
        for namespace, h in health.items():
            counter.add_metric([namespace], h[key])
        yield counter
    yield _gauge(
        "hindsight_conflicts_open",
        "Active memories flagged for a conflict review, not resolved yet.",
        ((n, h["conflicts_open"]) for n, h in health.items()),
    )
    yield _gauge(
        "hindsight_held_waiting",
        "Writes held for review, waiting for a person to approve or reject them.",
        ((n, h["held_waiting"]) for n, h in health.items()),
    )
    yield _gauge(
        "hindsight_stale_fraction",
        "Share of active memories (a sample of up to 1,000) scoring under the sweep threshold.",
        ((n, (h["stale"] or {}).get("fraction")) for n, h in health.items()),
    )
    yield _gauge(
        "hindsight_stale_sampled",
        "Active memories the stale fraction was computed from.",
        ((n, (h["stale"] or {}).get("sampled")) for n, h in health.items()),
    )
    latency = HistogramMetricFamily(
        "hindsight_index_latency_seconds",
        "Seconds from a write's append to the stream to its memory being searchable.",
        labels=["namespace"],
    )
    for state in states:
        histogram = state.index_latency
        latency.add_metric(
            [state.namespace],
            [(le, float(n)) for le, n in histogram.cumulative()],
            histogram.total,
        )
    yield latency


_RATES = {
    "merge_rate": "Share of processed writes merged into an existing memory (duplicates).",
    "drop_rate": "Share of processed writes the filters dropped.",
    "conflict_rate": "Share of indexed writes flagged as contradicting a stored memory.",
    "supersede_rate": "Share of conflict reviews that kept the new memory (archived the old).",
}


def _gauge(name: str, doc: str, values: Iterable[tuple[str, float | None]]) -> GaugeMetricFamily:
    """A gauge by namespace, without the namespaces whose value is None."""
    gauge = GaugeMetricFamily(name, doc, labels=["namespace"])
    for namespace, value in values:
        if value is not None:
            gauge.add_metric([namespace], value)
    return gauge
