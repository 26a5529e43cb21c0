"""The figures of the load benchmark: tables, the timeline, the plot, the RESULT line."""

from __future__ import annotations

import argparse
import itertools
import os
from collections import Counter, defaultdict
from typing import Any

from benchmarks.load.audit import Audit
from benchmarks.measure import p50_p99, percentile, plot_path


def timeline(
    rows: list[dict[str, float]], searches: list[tuple[float, float]]
) -> list[dict[str, float]]:
    """Per sample: writes accepted/s, processed/s, backlog, lag, search p50 of that second."""
    by_second: dict[int, list[float]] = defaultdict(list)
    for t, ms in searches:
        by_second[int(t)].append(ms)
    out = []
    for prev, row in itertools.pairwise(rows):
        dt = max(row["t"] - prev["t"], 1e-6)
        second = int(prev["t"])
        out.append(
            {
                **row,
                "accepted_s": (row["accepted"] - prev["accepted"]) / dt,
                "processed_s": (row["processed"] - prev["processed"]) / dt,
                "search_p50": percentile(by_second.get(second, []), 50),
                "search_p99": percentile(by_second.get(second, []), 99),
            }
        )
    return out


def plot(points: list[dict[str, float]], idle_p50: float, seconds: float, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): plot skipped")
        return
    t = [p["t"] for p in points]
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    ax1.plot(t, [p["accepted_s"] for p in points], label="writes accepted/s")
    ax1.plot(t, [p["processed_s"] for p in points], label="writes processed/s")
    ax1.set_ylabel("writes/s")
    ax1.legend(loc="upper right")
    ax2.plot(t, [p["backlog"] for p in points], color="tab:red", label="backlog")
    ax2.set_ylabel("backlog (writes)")
    lag = ax2.twinx()
    lag.plot(t, [p["lag_s"] * 1000 for p in points], color="tab:gray", label="index lag")
    lag.set_ylabel("index lag (ms)")
    ax2.legend(loc="upper left")
    lag.legend(loc="upper right")
    ax3.plot(t, [p["search_p50"] for p in points], label="search p50")
    ax3.plot(t, [p["search_p99"] for p in points], label="search p99", alpha=0.6)
    ax3.axhline(idle_p50, color="black", linestyle="--", label=f"idle p50 {idle_p50:.1f} ms")
    ax3.set_ylabel("search (ms)")
    ax3.set_xlabel("seconds since the load started")
    ax3.legend(loc="upper right")
    for ax in (ax1, ax2, ax3):
        ax.axvline(seconds, color="black", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    path = plot_path("load")
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def _ms(values: list[float]) -> str:
    return f"{percentile(values, 50):.1f} | {percentile(values, 99):.1f}"


def print_report(
    args: argparse.Namespace,
    lines: list[dict[str, Any]],
    found: Audit,
    points: list[dict[str, float]],
    *,
    idle_ms: list[float],
    probe_ms: list[float],
    errors: Counter[str],
    load_before: float,
    cpu_s: dict[str, float],
) -> dict[str, Any]:
    """Print the figures and the RESULT line; returns the figures."""
    receipts = [x for x in lines if x["k"] == "r"]
    searches = [x["ms"] for x in lines if x["k"] == "s"]
    refused = sum(1 for x in lines if x["k"] == "b")
    ops = ", ".join(f"{k} {v:,}" for k, v in sorted(Counter(x["op"] for x in receipts).items()))
    accepted = len({x["id"] for x in receipts})
    dups = sum(1 for x in receipts if x["dup"])
    o = found.outcomes
    calls = sum(x["calls"] for x in lines if x["k"] == "end")
    contextual = args.contextual or "minilm (the default)"
    print(
        f"\n## Load: {args.agents} agents, {args.seconds:.0f} s, {args.workers} workers, "
        f"contextual embedder {contextual}"
    )
    print(
        f"client calls {calls:,} ({calls / args.agents / args.seconds:.1f}/s per agent, one at a "
        f"time, mean pause {args.think_ms:.0f} ms); machine: {os.cpu_count()} cores, 1-min "
        f"load average {load_before:.1f} before the run, {os.getloadavg()[0]:.1f} at its end"
    )
    cpu = {"agents": sum(x.get("cpu_s", 0.0) for x in lines if x["k"] == "end"), **cpu_s}
    print(
        f"CPU seconds during the load (of {os.cpu_count()} cores x {args.seconds:.0f} s = "
        f"{(os.cpu_count() or 1) * args.seconds:.0f}): "
        + ", ".join(f"{name} {value:.1f}" for name, value in cpu.items())
    )
    print(f"receipts {len(receipts):,} ({ops}); searches {len(searches):,}")
    print(
        f"writes accepted {accepted:,} ({accepted / args.seconds:,.0f}/s); idempotent retries "
        f"answered as duplicates {dups:,}; refused (Backpressure) {refused}"
    )
    print(
        f"outcomes: indexed {o['indexed']:,}, merged {o['merged']:,}, dropped {o['dropped']:,}; "
        f"flagged as contradicting another: {found.counters.get('conflicts', 0):,} (seed included)"
    )
    print("dropped by reason: " + ", ".join(f"{k} {v:,}" for k, v in found.reasons.most_common()))
    print("\n| search (hybrid, top_k 5) | n | p50 ms | p99 ms |\n|---|---:|---:|---:|")
    print(f"| idle: one client, as an agent (pauses) | {len(idle_ms):,} | {_ms(idle_ms)} |")
    print(f"| under load: the same client | {len(probe_ms):,} | {_ms(probe_ms)} |")
    print(f"| under load: the {args.agents} agents | {len(searches):,} | {_ms(searches)} |")
    lag_ms = [x * 1000 for x in found.lags_s]
    print(
        f"\nindex lag per memory (indexed_at - created_at, {len(lag_ms):,} memories): "
        f"p50 {percentile(lag_ms, 50):.1f} ms, p99 {percentile(lag_ms, 99):.1f} ms"
    )
    print_timeline(points, args.seconds)
    print("\nerrors by type: " + (", ".join(f"{k} {v}" for k, v in errors.most_common()) or "none"))
    print_audit(found)
    print(
        f"RESULT agents={args.agents} seconds={args.seconds:g} accepted={accepted} "
        f"indexed={o['indexed']} merged={o['merged']} dropped={o['dropped']} "
        f"lost={len(found.lost)} duplicated={len(found.duplicated)} "
        f"errors={sum(errors.values())} search_p50_ms={percentile(searches, 50):.1f} "
        f"search_p99_ms={percentile(searches, 99):.1f} lag_p99_ms={percentile(lag_ms, 99):.1f}"
    )
    during = [p for p in points if 0 <= p["t"] <= args.seconds]
    idle, agents = p50_p99(idle_ms), p50_p99(searches)
    return {
        "client_calls": calls,
        "accepted": accepted,
        "duplicates_answered": dups,
        "refused": refused,
        "outcomes": dict(o),
        "dropped_by_reason": dict(found.reasons),
        "lost": len(found.lost),
        "duplicated": len(found.duplicated),
        "dead_lettered": len(found.dead_lettered),
        "wait_receipts_disagreeing": len(found.wait_mismatch),
        "twins": found.twins,
        "errors": dict(errors),
        "search_idle_ms": idle,
        "search_probe_under_load_ms": p50_p99(probe_ms),
        "search_agents_ms": agents,
        "agents_vs_idle": {k: agents[k] / idle[k] for k in agents if idle[k]},
        "index_lag_ms": p50_p99(lag_ms),
        "backlog_max": max((p["backlog"] for p in during), default=0),
        "cpu_s": cpu,
    }


def print_timeline(points: list[dict[str, float]], seconds: float) -> None:
    during = [p for p in points if 0 <= p["t"] <= seconds] or [{}]

    def most(name: str) -> float:
        return max(p.get(name, 0.0) for p in during)

    print(
        f"sampled each second during the load: backlog max {most('backlog'):,.0f}, "
        f"oldest unprocessed write max {most('lag_s') * 1000:,.0f} ms, "
        f"refine_pending max {most('refine_pending'):,.0f}"
    )
    print(
        "\n| t s | accepted/s | processed/s | backlog | lag ms | refine pending | search p50 ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for p in points[:: max(1, len(points) // 15)]:
        print(
            f"| {p['t']:.0f} | {p['accepted_s']:,.0f} | {p['processed_s']:,.0f} "
            f"| {p['backlog']:,.0f} | {p['lag_s'] * 1000:,.0f} | {p['refine_pending']:,.0f} "
            f"| {p['search_p50']:.1f} |".replace("nan", "-")
        )


def print_audit(found: Audit) -> None:
    print(
        f"audit: lost {len(found.lost)}, duplicated {len(found.duplicated)}, dead-lettered "
        f"{len(found.dead_lettered)}, wait=True receipts disagreeing {len(found.wait_mismatch)}; "
        f"active memories with the same content as another (separate writes) {found.twins}"
    )
    for name, items in (
        ("lost", found.lost),
        ("duplicated", found.duplicated),
        ("wait", found.wait_mismatch),
        ("note", found.notes),
    ):
        for item in items[:10]:
            print(f"  {name}: {item}")
