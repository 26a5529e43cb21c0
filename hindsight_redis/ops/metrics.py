"""Prometheus metrics: per-process histograms and per-namespace series read from Redis.

Per process (the default registry): ``hindsight_worker_batch_seconds`` and
``hindsight_index_lag_seconds`` (defined and observed by ``pipeline.consumer``) and
``hindsight_search_seconds`` (by ``search.searcher``): each room times itself, this
module serves what the registry holds. Per namespace, read from Redis at scrape time
(``stats.read_queue_states``) for every namespace of the registry
(``keys.namespace_registry``) plus the configured one: the counters
``hindsight_accepted_total``, ``_processed_total``, ``_indexed_total``,
``_merged_total``, ``_dropped_total`` (by ``reason``), ``_dead_lettered_total``,
``_replayed_total``, ``_held_total``, ``_approved_total``, ``_rejected_total``, and
the gauges ``hindsight_backlog``, ``_pending``, ``_undelivered``, ``_lag_seconds``,
``_dead_letters``, ``_stream_length``, ``_refine_pending``, ``_memories`` (by
``status``), ``_memories_protected``. The LLM's spend (``providers.spend``): the
counters ``hindsight_llm_tokens_total``, ``_llm_usd_total``, ``_llm_calls_total`` and
``_llm_budget_skips_total`` by ``namespace`` and ``stage``, the gauges
``hindsight_llm_tokens_today`` and ``_llm_usd_today`` (UTC day) by namespace, and the
budget, ``hindsight_llm_budget_tokens`` and ``_llm_budget_usd`` (0: unlimited). Memory
health (``ops.health``): the gauges ``hindsight_merge_rate``, ``_drop_rate``,
``_drop_rate_by_reason``, ``_conflict_rate``, ``_supersede_rate``, ``_conflicts_open``,
``_held_waiting``, ``_stale_fraction`` (a sample, re-read at most once a minute per
namespace) and ``_stale_sampled``, the counters ``hindsight_conflicts_flagged_total``,
``_conflicts_resolved_total`` (by ``keep``), ``_resolutions_undone_total``, and the
histogram ``hindsight_index_latency_seconds`` (write to searchable, the workers' buckets).

``metrics_app(settings)`` is the ASGI app serving them all (any GET: the
router picks the path); the MCP HTTP server routes ``/metrics`` to it,
``serve`` runs it alone (``hindsight-redis metrics``). A read is cached for
``cache_s`` and covers at most ``max_namespaces`` namespaces, so scrapes
cost Redis a bounded amount.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.version import package_version
from hindsight_redis.errors import HindsightError
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.lifecycle.staleness import StaleSample
from hindsight_redis.ops.health import StaleCache, health_families
from hindsight_redis.ops.stats import QueueState, read_queue_states
from hindsight_redis.pipeline.consumer import BATCH_SECONDS, INDEX_LAG_SECONDS
from hindsight_redis.providers.spend import NamespaceSpend, SpendBudget, read_spend
from hindsight_redis.search.searcher import SEARCH_SECONDS
from hindsight_redis.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

PROCESS_SERIES = (BATCH_SECONDS, INDEX_LAG_SECONDS, SEARCH_SECONDS)
"""The histograms of this process (in the default registry), served beside the
namespaces' series whichever rooms the process imported."""

# -- the series read from Redis -------------------------------------------------------

# Counters of the stats hash (monotonic: nothing decrements them), by hash field.
_COUNTERS = {
    "accepted": "Writes accepted onto the stream.",
    "processed": "Writes processed (indexed, merged, dropped or dead-lettered).",
    "indexed": "Writes indexed as new memories.",
    "merged": "Writes merged into an existing memory (duplicates).",
    "dead_lettered": "Writes moved to the dead letters after their last try.",
    "replayed": "Dead letters put back on the stream.",
    "held": "Writes held for review instead of being indexed.",
    "approved": "Held writes a person approved (indexed after).",
    "rejected": "Held writes a person rejected (never indexed).",
}
# Gauges, by ``QueueState`` attribute.
_GAUGES = {
    "backlog": "Accepted writes not processed yet.",
    "pending": "Entries delivered to a worker and not acknowledged.",
    "undelivered": "Entries no worker has read yet.",
    "dead_letters": "Dead letters waiting for a replay.",
    "stream_length": "Entries in the stream (processed ones kept included).",
}


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One read of every namespace's state, as a scrape renders it."""

    states: list[QueueState]
    known: int
    """Namespaces known: the registry's and the configured one (beyond the cap: left out)."""
    read_s: float
    taken_at: float
    up: bool
    """Whether Redis answered."""
    spend: list[NamespaceSpend] = dataclasses.field(default_factory=list)
    budget: SpendBudget = dataclasses.field(default_factory=SpendBudget)
    stale: dict[str, StaleSample | None] = dataclasses.field(default_factory=dict)
    """The stale samples by namespace (none: the sweep threshold is off)."""


class NamespaceCollector(Collector):
    """The per-namespace series of one ``Snapshot``, and the scrape's own."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterable[Metric]:
        """Every family of the snapshot (a namespace without an index has no memory counts)."""
        yield from _namespace_families(self.snapshot.states, self.snapshot.taken_at)
        yield from _spend_families(self.snapshot.spend, self.snapshot.budget)
        yield from health_families(
            self.snapshot.states, self.snapshot.stale, self.snapshot.taken_at
        )
        yield from _scrape_families(self.snapshot)


def _namespace_families(states: list[QueueState], now: float) -> Iterator[Metric]:
    for field, doc in _COUNTERS.items():
        counter = CounterMetricFamily(f"hindsight_{field}", doc, labels=["namespace"])
        for state in states:
            counter.add_metric([state.namespace], state.counters.get(field, 0))
        yield counter
    dropped = CounterMetricFamily(
        "hindsight_dropped",
        "Writes the filters dropped, by reason.",
        labels=["namespace", "reason"],
    )
    for state in states:
        for reason, count in sorted(state.dropped.items()):
            dropped.add_metric([state.namespace, reason], count)
    yield dropped
    for attribute, doc in _GAUGES.items():
        yield _gauge(f"hindsight_{attribute}", doc, ((s, getattr(s, attribute)) for s in states))
    yield _gauge(
        "hindsight_lag_seconds",
        "Age of the oldest unprocessed write (0: none).",
        ((s, s.lag_s(now)) for s in states),
    )
    yield _gauge(
        "hindsight_refine_pending",
        "Memories waiting for their contextual vector.",
        ((s, s.refine_pending) for s in states),
    )
    yield _gauge(
        "hindsight_refine_drafts",
        "Memories with a draft contextual vector, waiting for the exact one.",
        ((s, s.refine_drafts) for s in states),
    )
    yield _gauge(
        "hindsight_refine_chinese",
        "Chinese memories waiting for their multilingual vector (re-ranks Chinese searches).",
        ((s, s.refine_chinese) for s in states),
    )
    yield _gauge(
        "hindsight_refine_lag_seconds",
        "Age of the oldest memory waiting for its contextual vector (0: none).",
        ((s, s.refine_lag_s(now) if s.refine_pending is not None else None) for s in states),
    )
    memories = GaugeMetricFamily(
        "hindsight_memories", "Memories stored, by status.", labels=["namespace", "status"]
    )
    for state in states:
        for status, count in (state.memories or {}).items():
            if status != "protected":  # a share of the active ones, not a status
                memories.add_metric([state.namespace, status], count)
    yield memories
    yield _gauge(
        "hindsight_memories_protected",
        "Active memories protected from sweeps.",
        ((s, (s.memories or {}).get("protected")) for s in states),
    )


# The LLM's spend counters, by field of a spend hash's stage (``spend.Spend.stages``).
_SPEND_COUNTERS = {
    "tokens": "LLM tokens (prompt and completion) spent, by stage.",
    "usd": "LLM dollars spent (litellm's cost map; unpriced models count 0), by stage.",
    "calls": "LLM calls made, by stage.",
    "skipped": "LLM calls not made for the daily budget (the heuristic stood in), by stage.",
}
_SPEND_NAMES = {"skipped": "budget_skips"}


def _spend_families(spends: list[NamespaceSpend], budget: SpendBudget) -> Iterator[Metric]:
    for field_name, doc in _SPEND_COUNTERS.items():
        name = f"hindsight_llm_{_SPEND_NAMES.get(field_name, field_name)}"
        counter = CounterMetricFamily(name, doc, labels=["namespace", "stage"])
        for spend in spends:
            for stage, values in sorted(spend.total.stages.items()):
                if field_name in values:
                    counter.add_metric([spend.namespace, stage], values[field_name])
        yield counter
    tokens = GaugeMetricFamily(
        "hindsight_llm_tokens_today", "LLM tokens spent today (UTC).", labels=["namespace"]
    )
    usd = GaugeMetricFamily(
        "hindsight_llm_usd_today", "LLM dollars spent today (UTC).", labels=["namespace"]
    )
    for spend in spends:
        tokens.add_metric([spend.namespace], spend.today.tokens)
        usd.add_metric([spend.namespace], spend.today.usd)
    yield tokens
    yield usd
    yield GaugeMetricFamily(
        "hindsight_llm_budget_tokens",
        "LLM tokens a namespace may spend per UTC day (0: unlimited).",
        value=budget.tokens,
    )
    yield GaugeMetricFamily(
        "hindsight_llm_budget_usd",
        "LLM dollars a namespace may spend per UTC day (0: unlimited).",
        value=budget.usd,
    )


def _scrape_families(snap: Snapshot) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "hindsight_redis_up", "Whether Redis answered the last read.", value=float(snap.up)
    )
    yield GaugeMetricFamily(
        "hindsight_namespaces", "Namespaces known (registry and configured).", value=snap.known
    )
    yield GaugeMetricFamily(
        "hindsight_metrics_namespaces_omitted",
        "Known namespaces left out of these series (beyond max_namespaces).",
        value=max(snap.known - len(snap.states), 0),
    )
    yield GaugeMetricFamily(
        "hindsight_metrics_read_seconds",
        "Time the last read of the namespaces' state took.",
        value=snap.read_s,
    )
    yield InfoMetricFamily(
        "hindsight_build", "The running hindsight-redis.", value={"version": package_version()}
    )


def _gauge(
    name: str, doc: str, values: Iterable[tuple[QueueState, float | None]]
) -> GaugeMetricFamily:
    """A gauge by namespace, without the namespaces whose value is None."""
    gauge = GaugeMetricFamily(name, doc, labels=["namespace"])
    for state, value in values:
        if value is not None:
            gauge.add_metric([state.namespace], value)
    return gauge


class _Exposition(Collector):
    """The process's default registry, then one snapshot's namespaces."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.namespaces = NamespaceCollector(snapshot)

    def collect(self) -> Iterable[Metric]:
        yield from REGISTRY.collect()
        yield from self.namespaces.collect()


# -- serving ------------------------------------------------------------------------


class MetricsApp:
    """ASGI app answering every GET with the exposition (the router picks the path).

    Opens its own Redis connection on the first scrape (``aclose`` closes
    it). A scrape while Redis is down still answers 200, with
    ``hindsight_redis_up 0`` and the process's series.
    """

    def __init__(self, settings: Settings, *, cache_s: float = 2.0, max_namespaces: int = 1000):
        self.settings = settings
        self.cache_s = cache_s
        self.max_namespaces = max_namespaces
        self._redis: Redis | None = None
        self._lock = asyncio.Lock()
        self._last: Snapshot | None = None
        self._last_at = 0.0
        threshold = settings.sweeps.sweep_threshold
        self._stale = (
            None
            if threshold is None
            else StaleCache(RetentionPolicy.from_settings(settings.retention), threshold)
        )

    async def snapshot(self) -> Snapshot:
        """The state of the namespaces, read at most once per ``cache_s`` (scrapes share it)."""
        async with self._lock:
            if self._last is None or time.monotonic() - self._last_at >= self.cache_s:
                self._last = await self._read()
                self._last_at = time.monotonic()
            return self._last

    async def render(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition body and its content type (OpenMetrics when ``accept`` asks for it)."""
        encoder, content_type = choose_encoder(accept)
        return encoder(_Exposition(await self.snapshot())), content_type

    async def _read(self) -> Snapshot:
        # Imported here: the pipeline imports this module (observe_batch).
        from hindsight_redis.pipeline.namespaces import registered
        from hindsight_redis.redis.connection import connect

        started = time.perf_counter()
        try:
            if self._redis is None:
                settings = self.settings
                self._redis = await connect(settings.connection, settings.server, settings.worker)
            configured = self.settings.namespace
            known = set(await registered(self._redis, self.settings.key_prefix)) | {configured}
            chosen = [configured, *sorted(known - {configured})][: self.max_namespaces]
            prefix = self.settings.key_prefix
            keys = [Keys(prefix, n) for n in chosen]
            states = await read_queue_states(self._redis, keys)
            spend = await read_spend(self._redis, keys)
            if self._stale is not None:
                await self._stale.refresh(self._redis, states, prefix)
        except HindsightError as e:
            logger.warning("metrics: cannot read the namespaces' state: %s", e)
            return Snapshot([], 0, time.perf_counter() - started, time.time(), up=False)
        took = time.perf_counter() - started
        budget = SpendBudget.of(self.settings.llm)
        stale = (
            {}
            if self._stale is None
            else {s.namespace: self._stale.get(s.namespace) for s in states}
        )
        return Snapshot(states, len(known), took, time.time(), True, spend, budget, stale)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, b"method not allowed\n", "text/plain; charset=utf-8")
            return
        headers = dict(scope.get("headers") or [])
        body, content_type = await self.render(headers.get(b"accept", b"").decode("latin-1"))
        await _respond(send, 200, body, content_type, head=scope["method"] == "HEAD")

    async def aclose(self) -> None:
        """Close the Redis connection of the scrapes."""
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None


async def _respond(
    send: Send, status: int, body: bytes, content_type: str, *, head: bool = False
) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


def metrics_app(
    settings: Settings, *, cache_s: float = 2.0, max_namespaces: int = 1000
) -> MetricsApp:
    """The ASGI app serving the exposition for the namespaces under ``settings.key_prefix``.

    Route a path to it, e.g. ``app.router.routes.append(Route("/metrics", metrics))`` on
    the Starlette app of ``FastMCP.streamable_http_app()``; ``await metrics.aclose()``
    at shutdown.
    """
    return MetricsApp(settings, cache_s=cache_s, max_namespaces=max_namespaces)


def serve(settings: Settings, host: str, port: int) -> None:
    """Serve ``/metrics`` on ``host:port`` until interrupted (``hindsight-redis metrics``)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Route

    app = metrics_app(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await app.aclose()

    site = Starlette(routes=[Route("/metrics", app)], lifespan=lifespan)
    uvicorn.run(site, host=host, port=port, log_level="warning")
