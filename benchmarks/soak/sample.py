"""What the soak samples every 10 s: each process's RSS and descriptors, Redis's memory,
keys by kind, stream lengths, connections, the queues, the search index's sizes.

Processes are read from ``/proc`` (Linux; no psutil): ``VmRSS`` of ``status`` and the
entries of ``fd``. Keys are counted by a ``SCAN`` of the run's prefix, by kind: the segment
after the namespace's hash tag (``mem``, ``outcome``, ``content``...), memories split into
active and archived by the index's counts.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.ops.stats import read_queue_states

STREAMS = ("stream", "dlq", "drops", "audit", "resolutions")  # the namespace's streams


def rss_mb(pid: int) -> float | None:
    """Resident memory of ``pid`` in MB (``VmRSS``); None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def fds(pid: int) -> int | None:
    """Open file descriptors of ``pid``; None when it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def kind_of(key: str, keys: Keys) -> str:
    """The kind of a key of the run: ``mem``, ``outcome``, ``content``... (``other``: not
    the namespace's; ``prefix``: the run's cross-namespace keys)."""
    if key.startswith(keys.base + ":"):
        return key[len(keys.base) + 1 :].split(":", 1)[0]
    return "prefix" if key.startswith(keys.prefix + ":") else "other"


async def key_kinds(redis: Redis, keys: Keys) -> Counter[str]:
    """Keys of the run's prefix by kind (a full ``SCAN``)."""
    kinds: Counter[str] = Counter()
    async for key in redis.scan_iter(match=f"{keys.prefix}:*", count=2000):
        kinds[kind_of(as_text(key), keys)] += 1
    return kinds


async def bytes_per_key(
    redis: Redis, keys: Keys, kinds: list[str], per_kind: int = 30
) -> dict[str, float]:
    """The mean ``MEMORY USAGE`` of up to ``per_kind`` keys of each kind (a sample)."""
    found: dict[str, list[str]] = {kind: [] for kind in kinds}
    async for key in redis.scan_iter(match=f"{keys.prefix}:*", count=2000):
        name = as_text(key)
        kind = kind_of(name, keys)
        if kind in found and len(found[kind]) < per_kind * 20:
            found[kind].append(name)
    out = {}
    for kind, names in found.items():
        picked = random.Random(1).sample(names, min(per_kind, len(names)))
        sizes = [await redis.memory_usage(name, samples=0) for name in picked]
        known = [s for s in sizes if s]
        out[kind] = sum(known) / len(known) if known else 0.0
    return out


INDEX_FIGURES = ("num_docs", "num_terms", "num_records", "total_inverted_index_blocks")


async def index_figures(redis: Redis, keys: Keys) -> dict[str, float]:
    """The search index's counts and sizes (``FT.INFO``): ``index.num_terms``,
    ``index.inverted_sz_mb``...; empty before the index exists."""
    try:
        reply: Any = await redis.execute_command("FT.INFO", keys.index_alias)  # type: ignore[no-untyped-call]
    except Exception:  # no index yet
        return {}
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2], strict=False)
    out = {}
    for name, value in pairs:
        field = as_text(name)
        if field in INDEX_FIGURES or field.endswith("_mb"):
            try:
                out[f"index.{field}"] = float(as_text(value))
            except (TypeError, ValueError):
                continue
    return out


async def sample(
    redis: Redis, keys: Keys, processes: dict[str, int], t0: float
) -> dict[str, float]:
    """One sample: every figure flat in one dict (``rss_mb.<process>``, ``keys.<kind>``...)."""
    row: dict[str, float] = {"t": time.time() - t0}
    for name, pid in processes.items():
        rss, fd = rss_mb(pid), fds(pid)
        if rss is not None and fd is not None:
            row[f"rss_mb.{name}"] = rss
            row[f"fds.{name}"] = fd
    info: dict[str, Any] = await redis.info("memory")
    row["redis.used_memory_mb"] = int(info["used_memory"]) / 2**20
    row["redis.rss_mb"] = int(info["used_memory_rss"]) / 2**20
    clients: Any = await redis.client_list()
    row["connections"] = len(clients)
    for kind, n in (await key_kinds(redis, keys)).items():
        row[f"keys.{kind}"] = n
    pipe = redis.pipeline(transaction=False)
    for stream in STREAMS:
        pipe.xlen(f"{keys.base}:{stream}")
    for stream, length in zip(STREAMS, await pipe.execute(), strict=True):
        row[f"streams.{stream}"] = length
    state = (await read_queue_states(redis, [keys]))[0]
    now = time.time()
    row["queue.accepted"] = state.accepted
    row["queue.indexed"] = state.counters.get("indexed", 0)
    row["queue.backlog"] = state.backlog
    row["queue.lag_s"] = state.lag_s(now)
    row["queue.dead_letters"] = state.dead_letters
    row["refine.pending"] = state.refine_pending or 0
    row["refine.lag_s"] = state.refine_lag_s(now)
    row.update(await index_figures(redis, keys))
    memories = state.memories or {}
    row["memories.active"] = memories.get("active", 0)
    row["memories.archived"] = memories.get("archived", 0)
    return row
