"""Peers side by side: hindsight-redis, agent-memory-server and mem0 on one LoCoMo protocol.

Starts one embedded Redis (the project's: Redis 8.2, RediSearch 2.10, RedisJSON) and one
local OpenAI-compatible embeddings endpoint (``embed_server.py``, the project's static
model), then runs each system's adapter as a subprocess in its own venv (``bash
benchmarks/peers/install.sh`` makes them, beside this file), one after the other, the Redis
flushed between them; collects the JSON each prints, prints the table and draws
``benchmarks/results/peers.png``. The protocol is in ``protocol.py``: one memory per turn,
written one call at a time; each question searched in its own conversation, top 10.
hindsight-redis with the embedder held equal to the peers' is the like-for-like row.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import redis

from benchmarks.measure import plot_path
from benchmarks.peers.embed_server import MODELS
from benchmarks.peers.protocol import log, spawn
from hindsight_redis.redis.server import EmbeddedServer, free_port, get_profile

SUMMARY = "LoCoMo recall@10, search and write speed vs agent-memory-server and mem0 (own venvs)"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

SYSTEMS = {
    "hindsight-default": (
        "hindsight",
        sys.executable,
        "hindsight_adapter.py",
        ["--config", "default"],
    ),
    "hindsight-equal": ("hindsight", sys.executable, "hindsight_adapter.py", ["--config", "equal"]),
    "ams": ("ams", str(HERE / ".venv-ams" / "bin" / "python"), "ams_adapter.py", []),
    "mem0": ("mem0", str(HERE / ".venv-mem0" / "bin" / "python"), "mem0_adapter.py", []),
}
LABELS = {
    "hindsight-default": "hindsight-redis, default config",
    "hindsight-equal": "hindsight-redis, embedder held equal",
    "ams": "agent-memory-server 0.14.0",
    "mem0": "mem0ai 2.2.1 (Redis store)",
}


def start_embed_server(model: str, log_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The shared endpoint, in the project venv; returns the process and its base URL."""
    port = free_port()
    proc = spawn(
        [sys.executable, str(HERE / "embed_server.py"), "--port", str(port), "--preload", model],
        log_dir / "embed-server.log",
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line:
        raise RuntimeError(f"embedding server failed; see {log_dir / 'embed-server.log'}")
    return proc, json.loads(line)["url"]


def http_json(url: str, method: str = "GET") -> Any:
    request = urllib.request.Request(url, method=method, data=b"{}" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def run_system(
    name: str, args: argparse.Namespace, redis_url: str, embed_url: str, log_dir: Path
) -> dict[str, Any]:
    """One adapter in its venv; its JSON result plus the endpoint's and Redis's counts."""
    _, python, script, extra = SYSTEMS[name]
    limit = args.mem0_conversations if name == "mem0" else args.conversations
    command = [python, str(HERE / script), "--redis-url", redis_url, "--log-dir", str(log_dir)]
    command += ["--embed-url", embed_url, "--model", args.model, "--dims", str(args.dims), *extra]
    if limit:
        command += ["--conversations", str(limit)]
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    http_json(embed_url.removesuffix("/v1") + "/stats/reset", "POST")
    log(f"== {name}: {' '.join(command)}")
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with open(log_dir / f"{name}.log", "w") as err:
        done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
    if done.returncode != 0:
        tail = (log_dir / f"{name}.log").read_text()[-3000:]
        raise RuntimeError(f"{name} failed ({done.returncode}):\n{tail}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["key"] = name
    result["run_s"] = time.perf_counter() - started
    result["load_avg_1m"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    result["embed_endpoint"] = http_json(embed_url.removesuffix("/v1") + "/stats")
    result["redis_used_mb"] = client.info("memory")["used_memory"] / 2**20
    log(
        f"   {name}: R@10 {result['recall@10']:.3f}, {result['writes_per_s']:.0f} writes/s, "
        f"searchable +{result['searchable_after_s']:.2f} s, p50 {result['search_p50_ms']:.1f} ms "
        f"({result['run_s']:.0f} s)"
    )
    return result


def table(results: list[dict[str, Any]]) -> str:
    """The markdown table of the README."""
    head = (
        "| system | conversations / questions | R@10 | hit@10 | R@5 | search p50 / p99 ms "
        "| writes/s (acknowledged) | searchable after the last ack | first write to all searchable "
        "| memories indexed |"
    )
    rows = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        searchable = f"{r['searchable_after_s']:.2f} s"
        if "refined_after_s" in r:
            searchable += f" ({r['refined_after_s']:.1f} s with contextual vectors)"
        indexed = f"{r['indexed']:,} of {r['turns_written']:,}"
        if r.get("dropped"):
            indexed += f" ({r['dropped']:,} dropped by filters)"
        rows.append(
            f"| {LABELS[r['key']]} | {r['conversations']} / {r['questions']} "
            f"| **{r['recall@10']:.3f}** | {r['hit@10']:.3f} | {r['recall@5']:.3f} "
            f"| {r['search_p50_ms']:.1f} / {r['search_p99_ms']:.1f} "
            f"| {r['writes_per_s']:,.0f} | {searchable} "
            f"| {r['write_s'] + r['searchable_after_s']:.1f} s | {indexed} |"
        )
    return "\n".join(rows)


SHORT = {
    "hindsight-default": "hindsight\ndefault",
    "hindsight-equal": "hindsight\nequal embedder",
    "ams": "AMS\n0.14.0",
    "mem0": "mem0\n2.2.1",
}


def chart(results: list[dict[str, Any]], path: Path) -> None:
    """Five panels: recall, hit, search latency, writes/s, time until searchable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [SHORT[r["key"]] for r in results]
    palette = {
        "hindsight-default": "#c0392b",
        "hindsight-equal": "#e67e22",
        "ams": "#2980b9",
        "mem0": "#27ae60",
    }
    colors = [palette[r["key"]] for r in results]
    x = list(range(len(results)))
    fig, axes = plt.subplots(1, 5, figsize=(20, 4.6))

    def bars(ax: Any, values: list[float], title: str, fmt: str, log: bool = False) -> None:
        drawn = ax.bar(x, values, color=colors)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(x, names, fontsize=8)
        if log:
            ax.set_yscale("log")
        for bar, value in zip(drawn, values, strict=True):
            ax.annotate(
                fmt.format(value),
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
            )

    bars(axes[0], [r["recall@10"] for r in results], "recall@10 (higher is better)", "{:.3f}")
    axes[0].set_ylim(0, 1)
    bars(axes[1], [r["hit@10"] for r in results], "hit@10 (higher is better)", "{:.3f}")
    axes[1].set_ylim(0, 1)
    bars(
        axes[2],
        [r["search_p50_ms"] for r in results],
        "search p50 ms, dot: p99 (lower is better)",
        "{:.1f}",
    )
    axes[2].plot(x, [r["search_p99_ms"] for r in results], "ko", markersize=4)
    bars(
        axes[3],
        [r["writes_per_s"] for r in results],
        "acknowledged writes/s, log (higher is better)",
        "{:,.0f}",
        log=True,
    )
    bars(
        axes[4],
        [r["write_s"] + r["searchable_after_s"] for r in results],
        "s from first write to all searchable (lower)",
        "{:.1f}",
    )
    convs = sorted({r["conversations"] for r in results})
    fig.suptitle(
        f"Peers side by side: LoCoMo dev ({'/'.join(map(str, convs))} conversations), one memory "
        "per turn, one Redis, one embeddings endpoint (hindsight default: its own embedders)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"of {list(SYSTEMS)}")
    parser.add_argument("--conversations", type=int, help="default: all 5 (quick: 1)")
    parser.add_argument(
        "--mem0-conversations",
        type=int,
        help="fewer for mem0 (synchronous writes); default: as --conversations",
    )
    parser.add_argument(
        "--model",
        default="static-e5-multilingual-256",
        choices=list(MODELS),
        help="the endpoint's model for the compared rows",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.dims = MODELS[args.model]
    if args.quick and args.conversations is None:
        args.conversations = 1
    if args.mem0_conversations is None:
        args.mem0_conversations = args.conversations
    systems = [name.strip() for name in args.systems.split(",")]
    if unknown := set(systems) - set(SYSTEMS):
        raise SystemExit(f"unknown systems {sorted(unknown)}: of {list(SYSTEMS)}")
    missing = [SYSTEMS[name][1] for name in systems if not Path(SYSTEMS[name][1]).exists()]
    if missing:
        raise SystemExit(f"{', '.join(missing)} missing: run bash benchmarks/peers/install.sh")
    results = []
    with tempfile.TemporaryDirectory(prefix="hs-peers-") as tmp:
        log_dir = Path(tmp) / "logs"
        log_dir.mkdir()
        server = EmbeddedServer(Path(tmp) / "redis", get_profile("ephemeral"), port=0)
        state = server.start()
        embed, embed_url = start_embed_server(args.model, log_dir)
        try:
            log(f"redis {state.url}, embeddings {embed_url}, logs {log_dir}")
            for name in systems:
                results.append(run_system(name, args, state.url, embed_url, log_dir))
        except BaseException:  # keep the logs of a failed run
            kept = Path(tempfile.mkdtemp(prefix="hs-peers-logs-"))
            for f in log_dir.iterdir():
                (kept / f.name).write_bytes(f.read_bytes())
            log(f"logs kept in {kept}")
            raise
        finally:
            embed.terminate()
            embed.wait(10)
            server.stop()
    print(table(results))
    chart(results, plot_path("peers"))
    return {"systems": results}
