"""The Prometheus endpoint: ``metrics_app`` scraped over ASGI, ``hindsight-redis metrics`` over
HTTP, each parsed with ``prometheus_client.parser``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.keys import namespace_registry
from hindsight_redis.ops.metrics import MetricsApp, metrics_app
from hindsight_redis.ops.render import stats_lines
from hindsight_redis.redis.server import free_port
from tests.integration.helpers import Drain

FACT = (
    "The billing-service-v2 deploy on 2026-03-02 failed with ERR_CONN_RESET, rolled back by Alice"
)
OTHER = "Bob prefers answers in Chinese and wants weekly summaries every Friday at 9am"
THIRD = "The staging Postgres cluster moved to eu-west-1 on March 14; credentials rotate monthly"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _samples(text: str) -> Samples:
    """Every sample of an exposition, by (name, labels)."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def _namespaces(samples: Samples) -> set[str]:
    """The namespaces with series in an exposition."""
    return {dict(labels)["namespace"] for name, labels in samples if name == "hindsight_backlog"}


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[MetricsApp]:
    """The endpoint on the test's settings, reading Redis at every scrape."""
    served = metrics_app(settings, cache_s=0)
    yield served
    await served.aclose()


async def _scrape(app: MetricsApp) -> Samples:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hindsight") as http:
        response = await http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return _samples(response.text)


async def test_metrics_count_each_namespace_before_and_after_the_workers(
    app: MetricsApp, client: AsyncMemoryClient, settings: Settings, drain: Drain
) -> None:
    other = settings.model_copy(update={"namespace": "other"})
    for content in (FACT, OTHER, "ok thanks"):
        await client.write(content)
    async with AsyncMemoryClient(other) as second:
        await second.write(THIRD)
    before = await _scrape(app)
    assert _value(before, "hindsight_accepted_total", namespace="test") == 3
    assert _value(before, "hindsight_backlog", namespace="test") == 3
    assert _value(before, "hindsight_backlog", namespace="other") == 1
    assert _value(before, "hindsight_undelivered", namespace="test") == 3
    assert (_value(before, "hindsight_lag_seconds", namespace="test") or 0) > 0
    assert _value(before, "hindsight_namespaces") == 2
    batches = _value(before, "hindsight_worker_batch_seconds_count", namespace="test") or 0
    lags = _value(before, "hindsight_index_lag_seconds_count", namespace="test") or 0

    await drain()
    await drain(other)
    after = await _scrape(app)
    assert _value(after, "hindsight_accepted_total", namespace="test") == 3
    assert _value(after, "hindsight_indexed_total", namespace="test") == 2
    assert _value(after, "hindsight_indexed_total", namespace="other") == 1
    assert _value(after, "hindsight_processed_total", namespace="test") == 3
    assert _value(after, "hindsight_dropped_total", namespace="test", reason="rule:ack") == 1
    assert _value(after, "hindsight_merged_total", namespace="test") == 0
    for namespace in ("test", "other"):
        assert _value(after, "hindsight_backlog", namespace=namespace) == 0
        assert _value(after, "hindsight_pending", namespace=namespace) == 0
        assert _value(after, "hindsight_lag_seconds", namespace=namespace) == 0
        assert _value(after, "hindsight_dead_letters", namespace=namespace) == 0
    assert _value(after, "hindsight_memories", namespace="test", status="active") == 2
    assert _value(after, "hindsight_memories", namespace="test", status="archived") == 0
    assert _value(after, "hindsight_memories_protected", namespace="other") == 0
    assert _value(after, "hindsight_refine_pending", namespace="test") is not None
    assert _value(after, "hindsight_refine_drafts", namespace="test") == 0
    assert _value(after, "hindsight_refine_chinese", namespace="test") == 0
    assert (_value(after, "hindsight_worker_batch_seconds_count", namespace="test") or 0) > batches
    # every write's lag, the dropped one's too
    assert _value(after, "hindsight_index_lag_seconds_count", namespace="test") == lags + 3
    assert _value(after, "hindsight_redis_up") == 1
    assert any(name == "hindsight_build_info" for name, _ in after)


async def test_chinese_memories_wait_for_their_multilingual_vector_in_view(
    app: MetricsApp, client: AsyncMemoryClient, settings: Settings, drain: Drain
) -> None:
    await client.write("我们把数据库迁移到了新的服务器")
    await client.write(FACT)
    # a worker without the multilingual model: the English memory refined, the Chinese one waits
    await drain(settings.model_copy(update={"chinese_rerank_weight": 0.0}))
    stats = await client.stats()
    assert (stats["refine_pending"], stats["refine_drafts"], stats["refine_chinese"]) == (0, 0, 1)
    assert "(1 Chinese to embed)" in stats_lines(stats)
    assert _value(await _scrape(app), "hindsight_refine_chinese", namespace="test") == 1
    await drain()  # one with it
    assert (await client.stats())["refine_chinese"] == 0
    assert _value(await _scrape(app), "hindsight_refine_chinese", namespace="test") == 0


async def test_search_latency_histogram_counts_each_search(
    app: MetricsApp, client: AsyncMemoryClient, drain: Drain
) -> None:
    await client.write(FACT)
    await drain()
    labels = {"namespace": "test", "mode": "keyword"}
    count = _value(await _scrape(app), "hindsight_search_seconds_count", **labels) or 0
    for _ in range(3):
        assert await client.search("ERR_CONN_RESET", mode="keyword")
    after = await _scrape(app)
    assert _value(after, "hindsight_search_seconds_count", **labels) == count + 3
    assert _value(after, "hindsight_search_seconds_bucket", **labels, le="+Inf") == count + 3
    assert (_value(after, "hindsight_search_seconds_sum", **labels) or 0) > 0


async def test_every_registered_namespace_is_read_up_to_the_cap(
    settings: Settings, redis: Redis
) -> None:
    names = [f"ns-{i:03d}" for i in range(300)]  # more than one pipeline's worth
    await redis.sadd(namespace_registry(settings.key_prefix), *names)
    wide = metrics_app(settings, cache_s=0)
    capped = metrics_app(settings, max_namespaces=10, cache_s=60)
    try:
        samples = await _scrape(wide)
        assert _namespaces(samples) == {*names, "test"}
        assert _value(samples, "hindsight_namespaces") == 301
        capped_samples = await _scrape(capped)
        shown = _namespaces(capped_samples)
        assert len(shown) == 10 and "test" in shown  # the configured namespace comes first
        assert _value(capped_samples, "hindsight_metrics_namespaces_omitted") == 291
        await redis.sadd(namespace_registry(settings.key_prefix), "late")
        again = await _scrape(capped)  # cached: no second read
        assert _value(again, "hindsight_namespaces") == 301
    finally:
        await wide.aclose()
        await capped.aclose()


async def test_a_scrape_while_redis_is_down_says_so() -> None:
    down = metrics_app(Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0"), cache_s=0)
    samples = await _scrape(down)
    assert _value(samples, "hindsight_redis_up") == 0
    assert not any(name == "hindsight_backlog" for name, _ in samples)
    assert any(name.startswith("process_") or name.startswith("python_") for name, _ in samples)


def test_the_metrics_command_serves_metrics_on_its_port(settings: Settings) -> None:
    import redis as redis_sync

    redis = redis_sync.Redis.from_url(str(settings.redis_url))
    try:
        redis.sadd(namespace_registry(settings.key_prefix), "test")
        redis.hset(f"{settings.key_prefix}:{{test}}:stats", mapping={"dropped:rule:ack": 4})
    finally:
        redis.close()
    port = free_port()
    env = {**os.environ, **settings.to_env()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hindsight_redis.cli", "metrics", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/metrics")
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "metrics did not serve"
                time.sleep(0.05)
        assert response.status_code == 200
        samples = _samples(response.text)
        assert _value(samples, "hindsight_dropped_total", namespace="test", reason="rule:ack") == 4
        assert _value(samples, "hindsight_backlog", namespace="test") == 0
        assert any(name == "hindsight_worker_batch_seconds" for name in _families(response.text))
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 404
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)  # reaps it and closes its stderr pipe
        assert proc.returncode == 0, err


def _families(text: str) -> set[str]:
    return {family.name for family in text_string_to_metric_families(text)}
