"""The write-to-searchable histogram kept in a hash: buckets, cumulative counts, quantiles."""

from __future__ import annotations

import pytest

from hindsight_redis.core.histogram import INDEX_LATENCY_BUCKETS, Histogram, bucket_of


def test_a_value_counts_in_the_first_bucket_at_or_above_it() -> None:
    assert bucket_of(0.0) == "0.05"
    assert bucket_of(0.05) == "0.05"  # Prometheus's le is inclusive
    assert bucket_of(0.051) == "0.1"
    assert bucket_of(1.0) == "1"
    assert bucket_of(300.0) == "300"
    assert bucket_of(301.0) == "+Inf"


def test_a_hash_becomes_cumulative_buckets_ending_at_inf() -> None:
    fields = {"0.05": "2", "1": "3", "+Inf": "1", "sum": "412.5", "other": "9"}
    histogram = Histogram.of(fields)
    assert histogram.count == 6 and histogram.total == 412.5
    buckets = histogram.cumulative()
    assert len(buckets) == len(INDEX_LATENCY_BUCKETS) + 1
    assert buckets[0] == ("0.05", 2) and buckets[4] == ("1", 5) and buckets[-1] == ("+Inf", 6)
    assert [n for _, n in buckets] == sorted(n for _, n in buckets)


def test_quantiles_interpolate_inside_their_bucket() -> None:
    histogram = Histogram((1.0, 2.0), (10, 10, 0))
    assert histogram.quantile(0.5) == pytest.approx(1.0)
    assert histogram.quantile(0.75) == pytest.approx(1.5)
    assert histogram.quantile(0.25) == pytest.approx(0.5)
    assert histogram.quantile(1.0) == pytest.approx(2.0)


def test_a_quantile_beyond_the_last_bound_is_that_bound_and_none_when_empty() -> None:
    assert Histogram((1.0, 2.0), (0, 1, 9)).quantile(0.99) == 2.0
    assert Histogram.of({}).quantile(0.5) is None
    with pytest.raises(ValueError):
        Histogram.of({}).quantile(1.5)
