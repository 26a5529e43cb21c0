"""Memory health's pure parts: the rates of the counters, the stale sample's pages, the
sweeps' scoring of hash fields."""

from __future__ import annotations

import math
import random

import pytest

from hindsight_redis.core.histogram import Histogram
from hindsight_redis.lifecycle.retention import RetentionPolicy, retention_score, score_fields
from hindsight_redis.lifecycle.staleness import StaleSample, sample_offsets
from hindsight_redis.ops.health import health_of, ratio
from hindsight_redis.ops.stats import QueueState


def _state(counters: dict[str, int], **extra: object) -> QueueState:
    return QueueState(
        namespace="n",
        counters=counters,
        stream_length=0,
        dead_letters=0,
        pending=0,
        undelivered=0,
        consumers={},
        oldest_ms=None,
        refine_pending=0,
        memories={"active": 10, "archived": 0, "protected": 0},
        **extra,  # type: ignore[arg-type]
    )


def test_rates_are_ratios_of_the_counters_and_none_before_any() -> None:
    counters = {
        "processed": 20,
        "indexed": 10,
        "merged": 2,
        "dropped:rule:ack": 3,
        "dropped:secret": 1,
        "conflicts": 1,
        "resolved:new": 3,
        "resolved:both": 1,
        "held": 4,
        "approved": 1,
        "rejected": 1,
    }
    latency = Histogram.of({"0.1": 3, "1": 1, "sum": 1.2})
    health = health_of(_state(counters, conflicts_open=2, index_latency=latency), None, 0.0)
    assert health["merge_rate"] == 0.1 and health["drop_rate"] == 0.2
    assert health["drop_rate_by_reason"] == {"rule:ack": 0.15, "secret": 0.05}
    assert health["conflict_rate"] == 0.1 and health["conflicts_open"] == 2
    assert health["supersede_rate"] == 0.75
    assert health["held_waiting"] == 2
    assert health["index_latency"]["count"] == 4 and health["index_latency"]["p50_s"] < 0.1
    empty = health_of(_state({}), None, 0.0)
    assert empty["merge_rate"] is None and empty["supersede_rate"] is None
    assert empty["held_waiting"] == 0 and empty["index_latency"]["p99_s"] is None
    assert ratio(0, 5) == 0.0 and ratio(5, 0) is None


def test_a_stale_sample_reports_its_share_and_whether_it_was_everything() -> None:
    assert StaleSample(200, 50, 1000, 0.25).fraction == 0.25
    assert not StaleSample(200, 50, 1000, 0.25).exact
    assert StaleSample(0, 0, 0, 0.25).fraction is None


def test_sample_pages_take_everything_or_spread_over_the_index() -> None:
    rng = random.Random(1)
    assert sample_offsets(0, 1000, 4, rng) == []
    assert sample_offsets(800, 1000, 4, rng) == [(0, 800)]
    pages = sample_offsets(100_000, 1000, 4, rng)
    assert [count for _, count in pages] == [250] * 4
    for n, (offset, count) in enumerate(pages):  # one page per quarter, none overlapping
        assert n * 25_000 <= offset and offset + count <= (n + 1) * 25_000
    assert sum(c for _, c in sample_offsets(1001, 1000, 4, rng)) == 1000


def test_scoring_hash_fields_is_the_retention_score() -> None:
    policy = RetentionPolicy(task_half_life_days={"chat": 7.0})
    now = 1_800_000_000.0
    rows = [
        ["3", "1799000000", "1790000000", "0.8", "0", "chat", None],
        [None, None, "1700000000", "", "1", "", "30"],
    ]
    parts, protected = score_fields(policy, rows, pending_hits=[0, 2], now=now)
    assert protected.tolist() == [False, True]
    first = retention_score(
        policy,
        access_count=3,
        last_accessed_at=1_799_000_000,
        created_at=1_790_000_000,
        write_score=0.8,
        protected=False,
        half_life_days=7.0,
        now=now,
    )
    second = retention_score(  # the pending reads count as reads made now
        policy,
        access_count=2,
        last_accessed_at=now,
        created_at=1_700_000_000,
        write_score=None,
        protected=True,
        half_life_days=30.0,
        now=now,
    )
    assert parts.score.tolist() == pytest.approx([first, second])
    assert not any(math.isnan(s) for s in parts.score)


def test_stats_lines_show_the_health_in_three_rows() -> None:
    from hindsight_redis.ops.render import health_rows, stats_lines

    counters = {"processed": 10, "indexed": 8, "merged": 1, "conflicts": 2, "resolved:new": 1}
    stale = StaleSample(1000, 120, 50_000, 0.25)
    latency = Histogram.of({"0.25": 9, "1": 1, "sum": 2.0})
    health = health_of(_state(counters, conflicts_open=3, index_latency=latency), stale, 0.0)
    rows = dict(health_rows(health))
    assert rows["health"] == (
        "merged 10.0%, dropped 0.0%, conflicts 25.0% of indexed (3 open), reviews kept new 100.0%"
    )
    assert (
        rows["stale"] == "12.0% under the sweep threshold 0.25 (a sample of 1,000 of 50,000 active)"
    )
    assert rows["searchable in"] == "p50 0.18 s, p99 0.95 s (10 writes indexed)"
    lines = stats_lines({"accepted": 10, "dropped": {"total": 0}, "workers": [], "health": health})
    assert "searchable in   p50" in lines
    assert health_rows(None) == []
