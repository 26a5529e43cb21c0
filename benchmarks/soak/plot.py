"""The soak's plot: RSS per process, connections and descriptors, keys and Redis memory,
the queues and search p99, over the run (``benchmarks/results/soak.png``)."""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks.measure import plot_path


def plot(samples: list[dict[str, float]], args: argparse.Namespace, f: dict[str, Any]) -> None:
    """Draw the run; skipped (said) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): plot skipped")
        return
    t = [r["t"] / 60 for r in samples]
    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    ax = axes[0]
    for name in sorted({k for r in samples for k in r if k.startswith("rss_mb.")}):
        ax.plot(t, [r.get(name, float("nan")) for r in samples], label=name[7:])
    ax.set_ylabel("RSS (MB)")
    ax.legend(loc="upper left", fontsize=7, ncol=3)
    ax = axes[1]
    ax.plot(t, [r["connections"] for r in samples], label="Redis connections", color="black")
    for name in sorted({k for r in samples for k in r if k.startswith("fds.")}):
        ax.plot(t, [r.get(name, float("nan")) for r in samples], label=f"fds {name[4:]}", alpha=0.6)
    ax.set_ylabel("count")
    ax.legend(loc="upper left", fontsize=7, ncol=3)
    ax = axes[2]
    for name in (
        "memories.active",
        "memories.archived",
        "keys.content",
        "keys.outcome",
        "keys.idem",
    ):
        ax.plot(t, [r.get(name, 0.0) for r in samples], label=name)
    ax.set_ylabel("keys")
    ax.legend(loc="upper left", fontsize=7)
    mem = ax.twinx()
    mem.plot(
        t,
        [r["redis.used_memory_mb"] for r in samples],
        color="black",
        linestyle="--",
        label="used_memory",
    )
    unexplained = dict(f["series"].get("redis.unexplained_mb", []))
    mem.plot(
        t,
        [unexplained.get(r["t"], float("nan")) for r in samples],
        color="gray",
        linestyle=":",
        label="used_memory less growing kinds",
    )
    mem.set_ylabel("Redis MB")
    mem.legend(loc="lower right", fontsize=7)
    ax = axes[3]
    ax.plot(t, [r["queue.backlog"] for r in samples], label="backlog", color="tab:red")
    ax.plot(t, [r["refine.pending"] for r in samples], label="refine pending", color="tab:orange")
    ax.set_ylabel("writes")
    ax.legend(loc="upper left", fontsize=7)
    p99 = ax.twinx()
    points = f["series"].get("search.p99_ms", [])
    p99.plot(
        [p[0] / 60 for p in points],
        [p[1] for p in points],
        color="tab:blue",
        alpha=0.6,
        label="search p99",
    )
    p99.set_yscale("log")  # a busy host's stalls reach seconds; the run's ms stay readable
    p99.set_ylabel("search p99 (ms)")
    p99.legend(loc="upper right", fontsize=7)
    ax.set_xlabel("minutes")
    verdict = "PASS" if f["passed"] else "FAIL: " + "; ".join(f["problems"])[:80]
    fig.suptitle(
        f"soak: {args.agents} agents + MCP searcher, {args.workers} workers, "
        f"{f['accepted']:,} writes, max_active {args.max_active}; {verdict}",
        fontsize=9,
    )
    fig.tight_layout()
    name = "soak_quick" if args.quick else "soak"
    path = plot_path(name)
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")
