"""Where a worker's time goes at full drain: per stage, on the CPU and waiting.

One ingest-only worker (``worker_role="ingest"``: no refining beside it) drains the writes
in this process, each stage's ``process`` and the commit timed by wall clock and by the
thread's CPU clock; the rest of the worker's time (reading the stream, claiming, acking,
trimming, the event loop) is ``other``; the process's CPU beside it counts the threads of
a tokenizer and of calls moved off the loop too. Waiting is wall minus CPU: a stage waits on Redis
round trips (dedup's lookups, the commit script) or, in a busy process, for the core.
Redis's own CPU over the drain (``INFO cpu``: the commit scripts, the index insertions, the
HNSW graphs) is measured beside it, per memory as well. Only the worker's rounds count per
write: starting (imports, the index, the models: ``SharedParts.warm``, in a thread) and
stopping are timed apart, once.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from redis.asyncio import Redis

from benchmarks.harness import bench_settings
from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.pipeline import stages
from hindsight_redis.pipeline.assembly import SharedParts
from hindsight_redis.pipeline.commit import Committer

BATCH = 500
MODELS = "models"
ROUNDS = "rounds"


class Clocks:
    """Wall and CPU seconds per part, and the calls of each."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.process: dict[str, float] = {}  # the whole process's CPU (every thread's)

    def wrap(self, name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        """``method`` timed under ``name``."""

        async def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu, process = time.perf_counter(), time.thread_time(), time.process_time()
            try:
                return await method(*args, **kwargs)
            finally:
                self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - wall
                self.cpu[name] = self.cpu.get(name, 0.0) + time.thread_time() - cpu
                self.calls[name] = self.calls.get(name, 0) + 1
                process = time.process_time() - process
                self.process[name] = self.process.get(name, 0.0) + process

        return timed

    def wrap_sync(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        """``method`` (blocking, maybe in another thread) timed under ``name``."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - wall
                self.cpu[name] = self.cpu.get(name, 0.0) + time.thread_time() - cpu
                self.calls[name] = self.calls.get(name, 0) + 1

        return timed


def stage_classes() -> Iterator[type]:
    """Every stage class of the pipeline (a ``name`` and an async ``process``)."""
    for info in pkgutil.iter_modules(stages.__path__):
        module = importlib.import_module(f"{stages.__name__}.{info.name}")
        for value in vars(module).values():
            ours = isinstance(value, type) and value.__module__ == module.__name__
            if ours and isinstance(getattr(value, "name", None), str) and hasattr(value, "process"):
                yield value


@contextmanager
def timed_stages(clocks: Clocks) -> Iterator[None]:
    """Each stage's ``process`` and ``Committer.commit`` timed while inside."""
    patched: list[tuple[type, str, Any]] = []
    for cls in stage_classes():
        patched.append((cls, "process", cls.process))  # type: ignore[attr-defined]
        cls.process = clocks.wrap(cls.name, cls.process)  # type: ignore[attr-defined]
    patched.append((Committer, "commit", Committer.commit))
    Committer.commit = clocks.wrap("commit", Committer.commit)  # type: ignore[method-assign]
    patched.append((SharedParts, "warm", SharedParts.warm))
    SharedParts.warm = clocks.wrap_sync(MODELS, SharedParts.warm)  # type: ignore[method-assign]
    patched.append((Worker, "_consume", Worker._consume))
    Worker._consume = clocks.wrap(ROUNDS, Worker._consume)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, attribute, original in patched:
            setattr(cls, attribute, original)


async def redis_cpu_s(redis: Redis) -> float:
    """Seconds of CPU the Redis server has used (user + system)."""
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def profile(url: str, texts: list[str], embedder: str) -> dict[str, Any]:
    """Per stage: ms of wall clock and of CPU per 1,000 writes, and its share of the
    worker's wall time; ``redis_cpu_ms``: the server's CPU per 1,000 writes."""
    settings = bench_settings(url, embedder=embedder, namespace="profile", worker_role="ingest")
    async with AsyncMemoryClient(settings) as client:
        for first in range(0, len(texts), BATCH):
            await client.write_many([{"content": t} for t in texts[first : first + BATCH]])
        worker = Worker(settings)
        clocks = Clocks()
        server_before = await redis_cpu_s(client.redis)
        wall, cpu, process = time.perf_counter(), time.thread_time(), time.process_time()
        with timed_stages(clocks):
            await worker.run_async(burst=True, own_process=True)  # as the CLI's
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        process = time.process_time() - process
        server = await redis_cpu_s(client.redis) - server_before
    # Per write: the rounds only. Starting (imports and their patterns, the index, the
    # models, in a thread) and stopping happen once.
    models = clocks.cpu.pop(MODELS, 0.0) * 1000
    clocks.wall.pop(MODELS, None)
    clocks.process.pop(MODELS, None)
    rounds = clocks.wall.pop(ROUNDS), clocks.cpu.pop(ROUNDS), clocks.process.pop(ROUNDS)
    startup = {"wall_ms": (wall - rounds[0]) * 1000, "cpu_ms": (process - rounds[2]) * 1000}
    startup["models_cpu_ms"] = models
    wall, cpu, process = rounds
    per_k = 1000 / len(texts)
    rows: dict[str, dict[str, float]] = {}
    for name in sorted(clocks.wall, key=lambda n: -clocks.wall[n]):
        rows[name] = {
            "wall_ms": clocks.wall[name] * 1000 * per_k,
            "cpu_ms": clocks.cpu[name] * 1000 * per_k,
            "share": clocks.wall[name] / wall,
        }
    rows["other"] = {
        "wall_ms": (wall - sum(clocks.wall.values())) * 1000 * per_k,
        "cpu_ms": (cpu - sum(clocks.cpu.values())) * 1000 * per_k,
        "share": 1 - sum(clocks.wall.values()) / wall,
    }
    return {
        "writes": len(texts),
        "memories_per_s": len(texts) / wall,
        "worker_wall_ms": wall * 1000 * per_k,
        "worker_cpu_ms": cpu * 1000 * per_k,
        "worker_process_cpu_ms": process * 1000 * per_k,
        "redis_cpu_ms": server * 1000 * per_k,
        "stages": rows,
        "startup_ms": startup,
    }


def report(figures: dict[str, Any]) -> None:
    """The profile table, in markdown."""
    print(
        f"\n## Where one worker's time goes ({figures['writes']:,} writes, "
        f"{figures['memories_per_s']:,.0f}/s; ms per 1,000 writes)\n"
    )
    print("| part | wall | CPU | waiting | share of wall |\n|---|---:|---:|---:|---:|")
    for name, row in figures["stages"].items():
        waiting = row["wall_ms"] - row["cpu_ms"]
        print(
            f"| {name} | {row['wall_ms']:,.0f} | {row['cpu_ms']:,.0f} | {waiting:,.0f} "
            f"| {row['share']:.0%} |"
        )
    print(
        f"| **worker** | {figures['worker_wall_ms']:,.0f} | {figures['worker_cpu_ms']:,.0f} | "
        f"{figures['worker_wall_ms'] - figures['worker_cpu_ms']:,.0f} | 100% |"
    )
    if "worker_process_cpu_ms" in figures:  # the tokenizer's threads, the offloaded calls
        print(f"| worker, all threads | | {figures['worker_process_cpu_ms']:,.0f} | | |")
    print(f"| Redis server (CPU) | | {figures['redis_cpu_ms']:,.0f} | | |")
    startup = figures.get("startup_ms")
    if startup:
        print(
            f"\nStarting and stopping, once (not above: imports, the index, the models): "
            f"{startup['wall_ms']:,.0f} ms wall, {startup['cpu_ms']:,.0f} ms CPU, of which the "
            f"models {startup.get('models_cpu_ms', 0):,.0f}."
        )
