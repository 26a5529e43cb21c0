"""Timing, percentiles and the result file of a run (standard library only).

``write_result`` writes ``benchmarks/results/<name>.json``: the benchmark's figures, the
command line, the git commit (and whether the tree had changes), the machine (cores, CPU
model, platform, Python), the 1/5/15-minute load averages before and after, the start time
and the duration. Latency depends on the host, so every benchmark compares within its run
(against a baseline measured beside it) and reports the ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
Mode = Literal["vector", "keyword", "hybrid"]
MODES: tuple[Mode, ...] = ("vector", "keyword", "hybrid")  # search modes, hybrid's baselines first


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank; NaN without values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def p50_p99(values: Sequence[float]) -> dict[str, float]:
    """The median and the 99th percentile of ``values``."""
    return {"p50": percentile(values, 50), "p99": percentile(values, 99)}


def ratio(value: float, baseline: float) -> float:
    """``value / baseline`` (NaN without a baseline)."""
    return value / baseline if baseline else float("nan")


async def timed(call: Callable[[str], Awaitable[object]], queries: Sequence[str]) -> list[float]:
    """Milliseconds of each ``await call(query)``, after a warm-up on the first 20 queries."""
    for query in queries[:20]:
        await call(query)
    out = []
    for query in queries:
        t0 = time.perf_counter()
        await call(query)
        out.append((time.perf_counter() - t0) * 1000)
    return out


@dataclass(frozen=True)
class Started:
    """When a run started, and the machine's load then."""

    at: str
    clock: float
    load: tuple[float, float, float]


def started() -> Started:
    """Now, for ``write_result``."""
    return Started(
        datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter(), os.getloadavg()
    )


def machine() -> dict[str, Any]:
    """Cores, CPU model (``/proc/cpuinfo``), platform and Python version."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            ln.split(":", 1)[1].strip()
            for ln in cpuinfo.read_text().splitlines()
            if ln.startswith("model name")
        ]
        model = names[0] if names else ""
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model or platform.processor(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def git_state() -> dict[str, Any]:
    """The commit checked out and whether the tree has changes (results aside); None outside
    a git checkout."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(done.stderr)
        return done.stdout.strip()

    try:
        changes = git("status", "--porcelain", "--", ".", ":(exclude)benchmarks/results")
        return {"commit": git("rev-parse", "HEAD"), "dirty": bool(changes)}
    except OSError:
        return {"commit": None, "dirty": None}


def plot_path(name: str) -> Path:
    """Where the benchmark ``name`` draws its plot: beside its result."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS / f"{name}.png"


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it: numpy scalars as numbers, NaN as null, paths as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()  # a numpy scalar
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def write_result(
    name: str, figures: dict[str, Any], args: argparse.Namespace, start: Started
) -> Path:
    """Write ``benchmarks/results/<name>.json``; returns its path."""
    options = {k: v for k, v in vars(args).items() if k not in ("list", "name")}
    result = {
        "benchmark": name,
        "quick": bool(options.pop("quick", False)),
        "figures": figures,
        "options": options,
        "command": shlex.join(["python", "-m", "benchmarks", *sys.argv[1:]]),
        "git": git_state(),
        "machine": machine(),
        "load_average": {"before": start.load, "after": os.getloadavg()},
        "started_at": start.at,
        "duration_s": time.perf_counter() - start.clock,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(_plain(result), indent=1, ensure_ascii=False) + "\n")
    return path
