"""The exposition of a snapshot of namespaces' state, without Redis."""

from __future__ import annotations

from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from hindsight_redis.ops.metrics import NamespaceCollector, Snapshot
from hindsight_redis.ops.stats import QueueState


def _state(namespace: str, **overrides: object) -> QueueState:
    fields: dict[str, object] = {
        "namespace": namespace,
        "counters": {"accepted": 5, "processed": 4, "indexed": 2, "dropped:rule:ack": 2},
        "stream_length": 5,
        "dead_letters": 0,
        "pending": 1,
        "undelivered": 0,
        "consumers": {"w1": 1},
        "oldest_ms": 1_000_000,
        "refine_pending": 0,
        "memories": {"active": 2, "archived": 1, "protected": 1},
    }
    return QueueState(**{**fields, **overrides})  # type: ignore[arg-type]


def _families(snapshot: Snapshot) -> dict[str, Metric]:
    encoder, _ = choose_encoder("")
    text = encoder(NamespaceCollector(snapshot)).decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_counters_are_counters_and_lag_is_the_age_at_the_read() -> None:
    snapshot = Snapshot([_state("a")], known=1, read_s=0.01, taken_at=1_030.0, up=True)
    families = _families(snapshot)
    counters = ("hindsight_accepted", "hindsight_indexed", "hindsight_dropped")
    assert {families[name].type for name in counters} == {"counter"}
    (lag,) = families["hindsight_lag_seconds"].samples
    assert lag.value == 30.0 and lag.labels == {"namespace": "a"}
    (backlog,) = families["hindsight_backlog"].samples
    assert backlog.value == 1
    memories = families["hindsight_memories"].samples
    assert {s.labels["status"]: s.value for s in memories} == {"active": 2, "archived": 1}


def test_the_refine_backlog_counts_drafts_and_chinese_memories_apart() -> None:
    state = _state("a", refine_pending=4, refine_drafts=2, refine_chinese=3)
    families = _families(Snapshot([state], known=1, read_s=0.0, taken_at=0.0, up=True))
    values = {
        name: families[name].samples[0].value
        for name in (
            "hindsight_refine_pending",
            "hindsight_refine_drafts",
            "hindsight_refine_chinese",
        )
    }
    assert values == {
        "hindsight_refine_pending": 4,
        "hindsight_refine_drafts": 2,
        "hindsight_refine_chinese": 3,
    }
    assert families["hindsight_refine_chinese"].type == "gauge"


def test_a_namespace_without_an_index_has_no_memory_series() -> None:
    bare = _state("bare", memories=None, refine_pending=None, oldest_ms=None)
    families = _families(Snapshot([bare], known=3, read_s=0.0, taken_at=0.0, up=True))
    assert not families["hindsight_memories"].samples
    assert not families["hindsight_refine_pending"].samples
    assert not families["hindsight_refine_chinese"].samples
    assert families["hindsight_lag_seconds"].samples[0].value == 0
    assert families["hindsight_metrics_namespaces_omitted"].samples[0].value == 2
