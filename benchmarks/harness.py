"""The benchmarks' harness around Redis: a server for the run, worker processes, drains and
index lag, and memories indexed without the worker.

Everything runs against a Redis started for the run (``embedded_redis``: the project's
embedded server; ``default_search_redis``: a server whose search module keeps its defaults,
as on servers the project did not start). Workers are real ``hindsight-redis worker``
processes, configured through ``Settings.to_env``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import redis
from redis.asyncio import Redis

from benchmarks.measure import percentile
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.documents import memory_document
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.core.vectors import vector_bytes
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.index.record import IndexInfo
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.providers.embedders import (
    Embedder,
    contextual_from_settings,
    embedder_from_settings,
)
from hindsight_redis.providers.projection import project
from hindsight_redis.redis.server import EmbeddedServer, get_profile

WORKERS = 2  # worker processes, unless a benchmark says otherwise


@contextmanager
def embedded_redis(profile: str = "ephemeral") -> Iterator[str]:
    """A fresh embedded Redis on a free port for the run; yields its URL."""
    with tempfile.TemporaryDirectory(prefix="hs-bench-") as tmp:
        server = EmbeddedServer(Path(tmp), get_profile(profile), port=0)
        state = server.start()
        try:
            yield state.url
        finally:
            server.stop()


@contextmanager
def default_search_redis() -> Iterator[str]:
    """The embedded Redis with its search module's GC set back to the module's defaults
    (every 30 s, threshold 100), as on servers the project did not start; yields its URL.
    Workers and searchers tune it at connect (``search_gc_tune``), as they would there."""
    with embedded_redis() as url:
        client = redis.Redis.from_url(url)
        for name, default in (("FORK_GC_RUN_INTERVAL", "30"), ("FORK_GC_CLEAN_THRESHOLD", "100")):
            client.execute_command("FT.CONFIG", "SET", name, default)  # type: ignore[no-untyped-call]
        client.close()
        yield url


def bench_settings(url: str, **overrides: Any) -> Settings:
    """Settings on ``url`` under a fresh key prefix: namespace ``bench``, profile
    ``ephemeral``, a backlog limit no run reaches; ``overrides`` win."""
    values: dict[str, Any] = {
        "redis_url": url,
        "key_prefix": f"b{uuid.uuid4().hex[:8]}",
        "namespace": "bench",
        "profile": "ephemeral",
        "max_backlog": 10_000_000,
    }
    return Settings(**(values | overrides))


# -- worker processes ------------------------------------------------------------------


def start_workers(
    settings: Settings, count: int, *flags: str, log_dir: Path | None = None
) -> list[subprocess.Popen[bytes]]:
    """``count`` ``hindsight-redis worker`` processes with ``flags``; their stderr goes to
    ``log_dir/worker-N.log`` when given."""
    env = {**os.environ, **settings.to_env()}
    command = [sys.executable, "-m", "hindsight_redis.cli", "worker", *flags]
    return [
        subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(log_dir / f"worker-{n}.log", "w") if log_dir else None,
        )
        for n in range(count)
    ]


def stop_workers(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGTERM: each finishes its round, acknowledges and exits."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        proc.wait(timeout=120)


def children_cpu_s() -> float:
    """CPU seconds of the worker processes that exited so far (robust to a busy machine)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _worker_flags(settings: Settings, namespaces: Sequence[str], *more: str) -> tuple[str, ...]:
    spread = list(namespaces) != [settings.namespace]
    return (("--all-namespaces",) if spread else ()) + more


async def processed(redis: Redis, prefix: str, namespaces: Sequence[str]) -> int:
    """Writes processed over ``namespaces`` (their ``processed`` counters, one round trip)."""
    pipe = redis.pipeline(transaction=False)
    for namespace in namespaces:
        pipe.hget(Keys(prefix, namespace).stats, "processed")
    return sum(int(v or 0) for v in await pipe.execute())


async def drain(
    redis: Redis, settings: Settings, namespaces: Sequence[str], total: int, workers: int = WORKERS
) -> dict[str, float]:
    """``workers`` burst workers process the ``total`` writes already in ``namespaces``.

    ``rate``: memories/s from the first processed write to the last (model loading
    excluded; the counters alone are polled, as ``stats()`` 100 times a second would take
    Redis time from the workers); ``cpu_ms``: the workers' CPU per memory, model loading
    included. Once drained the workers are stopped: their background refining is not timed.
    """
    cpu_s = children_cpu_s()
    procs = start_workers(settings, workers, *_worker_flags(settings, namespaces, "--burst"))
    t0 = time.perf_counter()
    first = None
    while (done := await processed(redis, settings.key_prefix, namespaces)) < total:
        if first is None and done:
            t0, first = time.perf_counter(), done
        await asyncio.sleep(0.01)
    rate = (total - (first or 0)) / max(time.perf_counter() - t0, 1e-6)
    stop_workers(procs)
    return {"rate": rate, "cpu_ms": (children_cpu_s() - cpu_s) * 1000 / total}


WRITE_BATCH = 100
"""Writes per ``write_many`` of a client process in ``concurrent_drain`` (an agent's flush)."""


def _write_all(env: dict[str, str], texts: list[str], go: Any) -> None:
    """A client process: once ``go`` is set, ``texts`` written (``write_many`` of
    ``WRITE_BATCH``) with the settings ``env`` rebuilds."""
    os.environ.update(env)
    go.wait()

    async def write() -> None:
        async with AsyncMemoryClient(Settings()) as client:
            for first in range(0, len(texts), WRITE_BATCH):
                batch = texts[first : first + WRITE_BATCH]
                await client.write_many([{"content": t} for t in batch])

    asyncio.run(write())


async def concurrent_drain(
    settings: Settings, texts: list[str], clients: int = 2, workers: int = WORKERS
) -> dict[str, float]:
    """Memories/s of ``workers`` running workers (models loaded) while ``clients`` client
    processes write ``texts`` between them as fast as they can: from the moment the
    writers start to the last write processed. ``write_rate``: the writers' own, over the
    same clock (should the writers be the slower, the drain rate is theirs)."""
    redis = Redis.from_url(settings.redis_url or "")
    namespaces = [settings.namespace]
    await AsyncMemoryClient(settings, redis=redis).write("warm-up: the workers load their models")
    procs = start_workers(settings, workers)
    context = multiprocessing.get_context("spawn")
    go = context.Event()
    writers = [
        context.Process(target=_write_all, args=(settings.to_env(), texts[n::clients], go))
        for n in range(clients)
    ]
    try:
        while await processed(redis, settings.key_prefix, namespaces) < 1:
            await asyncio.sleep(0.05)
        for writer in writers:
            writer.start()
        await asyncio.sleep(1.0)  # the writers' interpreters start (spawn) before the clock
        start = time.perf_counter()
        go.set()
        written_s = None
        while await processed(redis, settings.key_prefix, namespaces) < 1 + len(texts):
            if written_s is None and not any(w.is_alive() for w in writers):
                written_s = time.perf_counter() - start
            await asyncio.sleep(0.01)
        elapsed = time.perf_counter() - start
    finally:
        for writer in writers:
            writer.join(timeout=60)
        stop_workers(procs)
        await redis.aclose()
    return {
        "rate": len(texts) / elapsed,
        "write_rate": len(texts) / (written_s or elapsed),
        "clients": clients,
    }


async def index_lag(
    settings: Settings,
    namespaces: Sequence[str],
    texts: list[str],
    rate: float,
    seconds: float,
    role: str = "all",
) -> dict[str, float]:
    """Seconds from ``write()`` to indexed (``indexed_at - created_at`` of each memory) at a
    steady ``rate`` of writes round-robin over ``namespaces``, ``WORKERS`` workers of
    ``role`` running: ``texts`` in order (as many as ``rate`` and ``seconds`` ask; they must
    suffice).

    The clock starts once the workers have processed a warm-up write per namespace and its
    contextual vector is in (models loaded; workers of role ``ingest`` refine nothing).
    Merged writes have no memory of their own.
    """
    if len(texts) < rate * seconds:
        raise ValueError(f"{len(texts)} texts for {rate * seconds:.0f} writes")
    redis = Redis.from_url(settings.redis_url or "")
    clients = [
        AsyncMemoryClient(settings.model_copy(update={"namespace": name}), redis=redis)
        for name in namespaces
    ]
    for client in clients:  # registers every namespace before the workers start
        await client.write(f"warm-up of {client.keys.namespace}: workers load their models")
    cpu_s = children_cpu_s()
    procs = start_workers(settings, WORKERS, *_worker_flags(settings, namespaces, "--role", role))
    written: list[tuple[Keys, str]] = []
    lags: list[float] = []
    try:
        while await processed(redis, settings.key_prefix, namespaces) < len(clients):
            await asyncio.sleep(0.05)
        for client in clients:
            while role != "ingest" and (await client.stats())["refine_pending"]:
                await asyncio.sleep(0.1)
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            while len(written) < int(elapsed * rate):
                n = len(written)
                client = clients[n % len(clients)]
                receipt = await client.write(texts[n])
                written.append((client.keys, receipt.id))
            await asyncio.sleep(0.002)
        while await processed(redis, settings.key_prefix, namespaces) < len(clients) + len(written):
            await asyncio.sleep(0.05)
        pipe = redis.pipeline(transaction=False)
        for keys, memory_id in written:
            pipe.hmget(keys.doc(memory_id), ["created_at", "indexed_at"])
        for created, indexed in await pipe.execute():
            if created and indexed:
                lags.append(float(indexed) - float(created))
    finally:
        stop_workers(procs)
        await redis.aclose()
    return {
        "rate": rate,
        "p50_ms": percentile(lags, 50) * 1000,
        "p90_ms": percentile(lags, 90) * 1000,
        "p99_ms": percentile(lags, 99) * 1000,
        "memories": len(lags),
        "cpu_ms": (children_cpu_s() - cpu_s) * 1000 / max(len(written), 1),
    }


# -- memories indexed without the worker --------------------------------------------------


@dataclass
class DirectIndex:
    """A namespace's index written to straight, as a worker's commit writes (no filters, no
    dedup): for benchmarks that need many memories fast. The figures about the write path
    itself go through the public client and real workers."""

    redis: Redis
    settings: Settings
    keys: Keys
    info: IndexInfo
    embedder: Embedder
    contextual: Embedder | None

    @classmethod
    async def open(
        cls, redis: Redis, settings: Settings, embedder: Embedder | None = None
    ) -> DirectIndex:
        """The namespace's index, created if missing (``embedder``: the settings' default)."""
        keys = Keys(settings.key_prefix, settings.namespace)
        embedder = embedder or embedder_from_settings(settings.embedding)
        contextual = contextual_from_settings(settings.embedding)
        info = await MemoryIndex(
            redis, keys, settings.index, settings.search, settings.embedding
        ).ensure(embedder, contextual)
        return cls(redis, settings, keys, info, embedder, contextual)

    def document(
        self, event: MemoryEvent, vector: Any, context_vector: Any = None
    ) -> dict[str, str | bytes]:
        """The memory hash of ``event``; ``context_vector``: as a refiner adds it."""
        doc = memory_document(
            event,
            content=event.content,
            vector_field=self.info.vector_field,
            vector_datatype=self.info.datatype,
            embedding=vector,
            contextual=self.info.has_context,
        )
        if context_vector is not None:
            stored = project(np.asarray(context_vector)[None, :], self.info.context_projection)
            doc[CONTEXT_FIELD] = vector_bytes(stored[0], self.info.context_datatype)
            doc["refine"] = "done"
        return doc

    async def documents(
        self, items: Sequence[dict[str, Any]], context: str = "refine"
    ) -> list[tuple[str, dict[Any, Any]]]:
        """(key, hash) of each item (``MemoryEvent`` fields but the namespace).

        The static vector comes from the embedder; the contextual one, when the index has
        the field: ``refine``, none yet (``add`` runs a refiner after, as workers do: it
        reads each memory's ``context`` too); ``write``, embedded from the content now;
        ``stand-in``, the static vector zero-padded to the contextual dimension (same field,
        graph and sizes, no model time).
        """
        events = [MemoryEvent(namespace=self.keys.namespace, **item) for item in items]
        vectors = await self.embedder.embed([e.content for e in events])
        contexts: Any = [None] * len(events)
        if self.info.has_context and context == "write" and self.contextual is not None:
            contexts = await self.contextual.embed([e.content for e in events])
        elif self.info.has_context and context == "stand-in":
            contexts = np.zeros((len(events), self.info.context_dims), dtype=np.float32)
            width = min(self.info.dims, self.info.context_dims)
            contexts[:, :width] = vectors[:, :width]
        return [
            (self.keys.doc(e.event_id), self.document(e, vector, ctx))
            for e, vector, ctx in zip(events, vectors, contexts, strict=True)
        ]

    async def add(
        self,
        items: Sequence[dict[str, Any]],
        *,
        context: str = "refine",
        extras: Sequence[dict[str, str]] | None = None,
        batch: int = 1000,
    ) -> None:
        """Index ``items`` (see ``documents``) in batches, ``extras[n]`` overriding fields of
        the n-th; wait until indexed, then refine when ``context`` is ``refine``."""
        for start in range(0, len(items), batch):
            docs = await self.documents(items[start : start + batch], context)
            async with self.redis.pipeline(transaction=False) as pipe:
                for n, (key, doc) in enumerate(docs, start):
                    pipe.hset(key, mapping=doc | dict(extras[n] if extras else {}))
                await pipe.execute()
        s = self.settings
        index = MemoryIndex(self.redis, self.keys, s.index, s.search, s.embedding)
        await index.wait_indexed(self.info.name)
        if context == "refine" and self.contextual is not None and self.info.has_context:
            refiner = Refiner(self.redis, self.keys, self.contextual, batch_size=256)
            while await refiner.refine_once():
                pass
            # RediSearch 2.10 scores BM25 wrongly for documents updated since its last GC
            # (the refiner rewrote each): collect now rather than within the next 2 s.
            await self.redis.execute_command("FT.DEBUG", "GC_FORCEINVOKE", self.info.name)  # type: ignore[no-untyped-call]
