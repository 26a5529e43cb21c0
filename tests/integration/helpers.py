"""Helpers shared by integration tests: predicate waits, stages that fail, stall or hold a
batch on purpose, memory documents written straight to an index, a look at an index's fields."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis as redis_sync
from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.index.manager import IndexInfo, MemoryIndex
from hindsight_redis.pipeline.commit import doc_from_candidate
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.worker import WorkerReport
from hindsight_redis.providers.embedders import Embedder, HashEmbedder
from hindsight_redis.redis.server import find_binaries, free_port
from hindsight_redis.redis.server.local_cluster import ClusterState
from hindsight_redis.search.searcher import Searcher
from hindsight_redis.settings import Settings

Drain = Callable[..., Awaitable[WorkerReport]]
"""``await drain(settings=None, **worker_options)``: a burst worker's run (fixture ``drain``)."""


async def wait_for(predicate: Callable[[], Awaitable[bool]], timeout_s: float = 20.0) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_s}s")
        await asyncio.sleep(0.02)


class FailOn:
    """A stage that raises for candidates whose content contains ``marker``."""

    name = "fail-on"

    def __init__(self, marker: str, error: Exception | None = None) -> None:
        self.marker = marker
        self.error = error or RuntimeError("boom")
        self.calls = 0

    async def process(self, batch: Sequence[Candidate]) -> None:
        self.calls += 1
        if any(self.marker in c.content for c in batch if c.alive):
            raise self.error


class Slow:
    """A stage that takes ``delay_s`` per batch, to keep a worker mid-batch."""

    name = "slow"

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def process(self, batch: Sequence[Candidate]) -> None:
        await asyncio.sleep(self.delay_s)  # not a wait: the stage's own duration


class Gate:
    """A stage that holds the first batch it sees until ``release`` is set.

    ``in_flight`` is set once that batch is held: a fault injected then hits a
    worker with a batch read but not committed.
    """

    name = "gate"

    def __init__(self) -> None:
        self.in_flight = asyncio.Event()
        self.release = asyncio.Event()
        self.held = 0

    async def process(self, batch: Sequence[Candidate]) -> None:
        if not self.in_flight.is_set():
            self.held = len(batch)
            self.in_flight.set()
            await self.release.wait()


def wait_pid_gone(pid: int, timeout_s: float = 10.0) -> None:
    """Wait until process ``pid`` has exited: gone, or a zombie (its files and ports are
    released; a daemon's zombie waits for init, which may reap it only much later)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            if _state(pid) == "Z":
                return
        except (ProcessLookupError, FileNotFoundError):
            return
        time.sleep(0.02)
    raise AssertionError(f"pid {pid} still alive after {timeout_s}s")


def _state(pid: int) -> str:
    """The state letter of ``/proc/<pid>/stat`` (R, S, T stopped, Z zombie, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def freeze(pid: int, timeout_s: float = 10.0) -> None:
    """``SIGSTOP`` process ``pid`` and wait until it is stopped (the signal is asynchronous)."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout_s
    while _state(pid) != "T":
        assert time.monotonic() < deadline, f"pid {pid} did not stop"
        time.sleep(0.005)


async def hset_memory(
    redis: Any, keys: Any, info: Any, model_id: str, candidate: Candidate, **overrides: str
) -> None:
    """HSET one memory document as the worker's commit does (no stream, no filters)."""
    memory_id = candidate.event.event_id
    doc = doc_from_candidate(
        candidate,
        vector_field=info.vector_field,
        vector_datatype=info.datatype,
    )
    doc.update(overrides)
    await redis.hset(keys.doc(memory_id), mapping=doc)


@dataclass
class IndexEnv:
    """A namespace's index with the hash embedder; memories written without a worker."""

    redis: Redis
    keys: Keys
    settings: Settings
    embedder: HashEmbedder
    info: IndexInfo

    async def put(self, memory_id: str, content: str, **fields: Any) -> None:
        """HSET one memory document the way the worker's commit does."""
        status = fields.pop("status", "active")
        conflicts = fields.pop("conflicts_with", [])
        event = MemoryEvent(
            event_id=memory_id,
            namespace=self.keys.namespace,
            content=content,
            created_at=fields.pop("created_at", time.time()),
            **fields,
        )
        cand = Candidate("0-0", event, content, conflicts_with=list(conflicts))
        cand.embedding = (await self.embedder.embed([content]))[0]
        await hset_memory(
            self.redis, self.keys, self.info, self.embedder.model_id, cand, status=status
        )

    async def indexed(self, count: int) -> None:
        """Wait until the index holds ``count`` documents."""

        async def done() -> bool:
            info = await self.redis.ft(self.info.alias).info()  # type: ignore[no-untyped-call]
            return int(info["num_docs"]) >= count

        await wait_for(done)

    @property
    def searcher(self) -> Searcher:
        """A searcher on this index, with the hash embedder."""
        return Searcher(self.redis, self.keys, self.settings.search, self.embedder, self.info)

    async def search(self, query: str, **kwargs: Any) -> list[str]:
        """Ids of the hits of ``Searcher.search`` (its hit counts sent before it returns)."""
        searcher = self.searcher
        try:
            return [h.id for h in await searcher.search(query, **kwargs)]
        finally:
            await searcher.aclose()


@dataclass
class HashWrites:
    """How many times a hash was written (``hash_writes``), known once the block ends."""

    count: int = 0


@contextlib.asynccontextmanager
async def hash_writes(redis: Redis, key: str) -> AsyncIterator[HashWrites]:
    """Count the writes to the hash ``key`` made inside the block (keyspace events)."""
    old = (await redis.config_get("notify-keyspace-events"))["notify-keyspace-events"]
    await redis.config_set("notify-keyspace-events", "Kh")
    pubsub = redis.pubsub()
    await pubsub.subscribe(f"__keyspace@0__:{key}")
    assert (await pubsub.get_message(timeout=5))["type"] == "subscribe"  # type: ignore[index]
    writes = HashWrites()
    try:
        yield writes
        while await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2):
            writes.count += 1
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()
        await redis.config_set("notify-keyspace-events", old)


async def open_index_env(
    redis: Redis, settings: Settings, contextual: Embedder | None = None
) -> IndexEnv:
    """Ensure the namespace's index (hash embedder, optional contextual one)."""
    keys = Keys(settings.key_prefix, settings.namespace)
    embedder = HashEmbedder()
    info = await MemoryIndex(
        redis, keys, settings.index, settings.search, settings.embedding
    ).ensure(embedder, contextual)
    return IndexEnv(redis, keys, settings, embedder, info)


async def memory_keys(redis: Redis, keys: Keys) -> list[str]:
    """The keys of every memory hash of the namespace, sorted."""
    return sorted([k.decode() async for k in redis.scan_iter(match=keys.doc_prefix + "*")])


async def index_fields(redis: Redis, index: str) -> set[str]:
    """The field names of an index (``FT.INFO`` attributes, RESP2)."""
    info: dict[Any, Any] = await redis.ft(index).info()  # type: ignore[no-untyped-call]
    names: set[str] = set()
    for attribute in info["attributes"]:
        items = [x.decode() if isinstance(x, bytes) else x for x in attribute]
        for i, item in enumerate(items[:-1]):
            if item == "attribute":
                names.add(str(items[i + 1]))
    return names


async def write_and_drain(settings: Settings, texts: Sequence[str]) -> tuple[list[str], Any]:
    """Write ``texts`` in one batch, drain the stream with a worker: (ids, worker report)."""
    from hindsight_redis import AsyncMemoryClient, Worker

    async with AsyncMemoryClient(settings) as client:
        receipts = await client.write_many([{"content": t} for t in texts])
    report = await Worker(settings).run_async(burst=True)
    return [r.id for r in receipts], report


@contextlib.contextmanager
def bare_redis(tmp_path: Path, *extra: str) -> Iterator[str]:
    """A redis-server started by hand (no modules unless ``extra`` loads them); its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [
            str(find_binaries().server),
            "--port",
            str(port),
            "--save",
            "",
            "--dir",
            str(tmp_path),
            *extra,
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        client = redis_sync.Redis(port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis_sync.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.02)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait()


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """A plain HTTP server (not Redis) on a free port; a redis:// URL pointing at it."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        import socket

        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "http.server did not start"
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait()


async def until_answers(url: str, attempts: int = 300) -> None:
    """Wait until an HTTP server answers ``url`` at all (any status)."""
    import httpx

    async with httpx.AsyncClient() as http:
        for _ in range(attempts):
            try:
                await http.get(url)
                return
            except httpx.TransportError:
                await asyncio.sleep(0.05)


def cluster_node(layout: ClusterState, port: int) -> redis_sync.Redis:
    """A client of one node of a local cluster, that does not retry (a killed node fails
    at once)."""
    return redis_sync.Redis(
        host=layout.host, port=port, socket_timeout=5, retry=Retry(NoBackoff(), 0)
    )
