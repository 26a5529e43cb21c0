"""Soak: agents writing and searching at a steady rate for a long run, nothing may grow.

One embedded Redis (profile ``balanced``), a fresh prefix and namespace, default settings
but the retention: ``--workers`` ``hindsight-redis worker`` processes sweep every
``--sweep-every`` s with ``sweep_max_active`` ``--max-active`` (the lowest scored beyond it
are archived). An operator's job exports the archived memories to a cold file and purges
them from Redis every ``--cold-every`` s (``lifecycle.cold``). ``hindsight-redis mcp
--transport http --workers 0`` serves a searcher process that opens a new MCP session every
50 searches. ``--agents`` spawned load agents (``benchmarks.load.agents``: writes of every
kind, retries, searches) run for ``--seconds`` (30 min; 2 min with ``--quick``).

Every ``--every`` s (10; quick 5) the parent samples (``sample``): the RSS and file descriptors of
every process (Redis, workers, MCP server, agents, searcher), Redis's ``used_memory``, keys
by kind, stream lengths, ``CLIENT LIST``, backlog, refine lag; search p99 per interval
comes from the agents' and the searcher's logs. At the end it drains, audits every receipt
(indexed, merged, dropped with a reason, archived to the cold file, held, else lost) and
judges each series by its slope over the second half (``verdict``). Kinds of keys that
grow by design (an outcome per write and an idempotency key per keyed write, 7 days; the
audit trail, 365 days) are reported with their bytes and the steady state their TTL
implies; Redis's memory must be explained by them. The run fails when a checked series
grows, or anything was lost. Plot: ``benchmarks/results/soak.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.harness import embedded_redis, start_workers, stop_workers
from benchmarks.load.agents import Run, read_logs, settings_for
from benchmarks.load.audit import audit
from benchmarks.soak.agents import agent_main, searcher_main
from benchmarks.soak.judge import judge, print_judgement
from benchmarks.soak.sample import sample
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.lifecycle.cold import export_memories, purge_exported
from hindsight_redis.redis.server import free_port

SUMMARY = "agents, sweeping workers and an MCP server for 30 min: nothing grows, nothing lost"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, help="the run (default 1800; quick 120)")
    parser.add_argument("--agents", type=int, default=3, help="agent processes")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--think-ms", type=float, default=250.0, help="mean pause between an agent's calls"
    )
    parser.add_argument("--mcp-pause-ms", type=float, default=200.0, help="between MCP searches")
    parser.add_argument("--every", type=float, help="seconds between samples (10; quick 5)")
    parser.add_argument("--max-active", type=int, help="sweep_max_active (2000; quick 300)")
    parser.add_argument("--sweep-every", type=float, help="sweep_interval_s (30; quick 5)")
    parser.add_argument("--cold-every", type=float, help="export + purge period (120; quick 10)")
    parser.add_argument("--rng-seed", type=int, default=1)


class Soak:
    """The run's processes and what the parent gathers while they run."""

    def __init__(self, args: argparse.Namespace, url: str, tmp: Path) -> None:
        self.args, self.tmp = args, tmp
        self.run = Run(
            url=url,
            key_prefix=f"soak{uuid.uuid4().hex[:6]}",
            namespace="soak",
            agents=args.agents,
            seconds=args.seconds,
            think_s=args.think_ms / 1000,
            seed_turns=0,
            out_dir=str(tmp),
            rng_seed=args.rng_seed,
        )
        self.settings: Settings = settings_for(
            self.run,
            sweep_interval_s=args.sweep_every,
            sweep_max_active=args.max_active,
        )
        self.samples: list[dict[str, float]] = []
        self.purged: set[str] = set()
        self.cold: list[dict[str, float]] = []
        self.processes: dict[str, int] = {}
        self.mcp: subprocess.Popen[bytes] | None = None

    async def start_mcp(self) -> str:
        """The MCP HTTP server, its in-process worker off; its URL once it answers."""
        import httpx

        port = free_port()
        env = {**os.environ, **self.settings.to_env(), "HINDSIGHT_AGENT_ID": "mcp-searcher"}
        command = [sys.executable, "-m", "hindsight_redis.cli", "mcp", "--transport", "http"]
        self.mcp = subprocess.Popen(
            [*command, "--workers", "0", "--mcp-port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.tmp / "mcp.log", "w"),  # noqa: SIM115
        )
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient() as http:
            for _ in range(1200):
                try:
                    await http.get(url)
                    return url
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
        raise RuntimeError(f"the MCP server did not answer at {url}; see {self.tmp}/mcp.log")

    async def cold_cycle(self, client: AsyncMemoryClient, n: int) -> None:
        """Export the archived memories to a cold file, purge them from Redis."""
        t0 = time.perf_counter()
        path = self.tmp / f"cold-{n}.jsonl.gz"
        exported = await export_memories(client.redis, client.keys, path)
        removed: list[str] = []
        report = await purge_exported(client.redis, client.keys, path, removed_ids=removed)
        self.purged.update(removed)
        self.cold.append(
            {
                "exported": exported.count,
                "purged": report.removed,
                "kept_changed": report.kept_changed,
                "s": time.perf_counter() - t0,
            }
        )

    async def observe(self, client: AsyncMemoryClient, t0: float) -> None:
        """Sample every ``--every`` s until the run ends; the cold job just before a sample
        when due (the sample after it shows the floor of the archived memories' sawtooth)."""
        args = self.args
        next_cold, cycles = t0 + args.cold_every, 0
        # The last sample comes before the agents stop: their exit is no trend.
        while (now := time.time()) < t0 + args.seconds - 1:
            after_cold = 0.0
            if now >= next_cold:
                await self.cold_cycle(client, cycles)
                cycles, next_cold, after_cold = cycles + 1, next_cold + args.cold_every, 1.0
            row = await sample(client.redis, client.keys, self.processes, t0)
            row["after_cold"] = after_cold
            self.samples.append(row)
            print(_progress(row), flush=True)
            await asyncio.sleep(max(0.0, t0 + len(self.samples) * args.every - time.time()))


def _progress(row: dict[str, float]) -> str:
    rss = sum(v for k, v in row.items() if k.startswith("rss_mb."))
    return (
        f"t={row['t']:6.0f}s accepted {row['queue.accepted']:,.0f} backlog "
        f"{row['queue.backlog']:,.0f} active {row['memories.active']:,.0f} archived "
        f"{row['memories.archived']:,.0f} used_memory {row['redis.used_memory_mb']:.1f} MB "
        f"rss(all) {rss:.0f} MB conns {row['connections']:.0f} refine {row['refine.pending']:.0f}"
    )


async def soak(args: argparse.Namespace, url: str, redis_pid: int, tmp: Path) -> dict[str, Any]:
    s = Soak(args, url, tmp)
    print(f"prefix {s.run.key_prefix!r}; {args.seconds:.0f} s; working files in {tmp}")
    workers = start_workers(s.settings, args.workers, log_dir=tmp)
    ctx = mp.get_context("spawn")
    ready, go, start = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
    procs: list[Any] = []
    try:
        mcp_url = await s.start_mcp()
        assert s.mcp is not None
        procs = [
            ctx.Process(target=agent_main, args=(s.run, n, ready, go, start), name=f"agent-{n}")
            for n in range(args.agents)
        ]
        pause_s = args.mcp_pause_ms / 1000
        searcher_args = (mcp_url, str(tmp), args.seconds, pause_s, go, start)
        procs.append(ctx.Process(target=searcher_main, args=searcher_args, name="mcp-searcher"))
        for proc in procs:
            proc.start()
        for _ in range(args.agents):
            await asyncio.to_thread(ready.get, True, 600)
        s.processes = {
            "redis": redis_pid,
            "mcp_server": s.mcp.pid,
            **{f"worker-{n}": w.pid for n, w in enumerate(workers)},
            **{p.name: p.pid for p in procs if p.pid is not None},
        }
        async with AsyncMemoryClient(s.settings) as client:
            start.value = t0 = time.time() + 0.5
            go.set()
            load_before = os.getloadavg()
            await s.observe(client, t0)
            for proc in procs:
                await asyncio.to_thread(proc.join, 300)
            drain_s = await drain(client)
            final = await sample(client.redis, client.keys, s.processes, t0)
            return await finish(s, client, final, drain_s, load_before, workers)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        stop_workers(workers)
        if s.mcp is not None:
            s.mcp.terminate()
            s.mcp.wait(timeout=60)


async def drain(client: AsyncMemoryClient, timeout_s: float = 600) -> float:
    """Seconds until every accepted write is processed (backlog and pending 0)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        st = await client.stats()
        if st["backlog"] == 0 and st["pending"] == 0:
            return time.monotonic() - t0
        await asyncio.sleep(0.5)
    print(f"warning: not drained within {timeout_s:.0f} s")
    return float("nan")


async def finish(
    s: Soak,
    client: AsyncMemoryClient,
    final: dict[str, float],
    drain_s: float,
    load_before: tuple[float, float, float],
    workers: list[Any],
) -> dict[str, Any]:
    """Audit every receipt, judge the series, print, plot; the figures."""
    lines = read_logs(s.tmp) + read_mcp_log(s.tmp)
    receipts = [x for x in lines if x["k"] == "r"]
    write_errors = sum(1 for x in lines if x["k"] == "e" and "search" not in x.get("op", ""))
    found = await audit(client, receipts, {x["id"] for x in receipts}, write_errors)
    lost = await explain_lost(client, found.lost, s.purged)
    exits = {
        name: proc.poll()
        for name, proc in [
            ("mcp_server", s.mcp),
            *((f"worker-{n}", w) for n, w in enumerate(workers)),
        ]
        if proc is not None and proc.poll() is not None
    }
    figures = await judge(
        s.args, s.samples, final, lines, found, lost, client, s.cold, drain_s, exits
    )
    figures["load_average_during"] = {"before": load_before, "after": os.getloadavg()}
    print_judgement(figures)
    from benchmarks.soak.plot import plot

    plot(s.samples, s.args, figures)
    return figures


def read_mcp_log(tmp: Path) -> list[dict[str, Any]]:
    """The MCP searcher's lines, as ``read_logs`` gives the agents'."""
    import json

    path = tmp / "mcp.jsonl"
    if not path.exists():
        return [{"k": "e", "t": 0, "type": "NoMcpLog", "msg": "", "op": "mcp_session"}]
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append({**json.loads(line), "agent": "mcp-searcher"})
        except json.JSONDecodeError:
            out.append({"k": "e", "t": 0, "type": "TruncatedLog", "msg": "mcp", "op": "mcp"})
    return out


async def explain_lost(
    client: AsyncMemoryClient, lost: list[str], purged: set[str]
) -> dict[str, list[str]]:
    """The writes the load audit found without a memory, by what became of them: purged to
    the cold file, held for review, else lost."""
    import json

    out: dict[str, list[str]] = {"cold": [], "held": [], "lost": []}
    for entry in lost:
        memory_id = entry.split(":", 1)[0]
        if memory_id in purged:
            out["cold"].append(memory_id)
            continue
        raw = await client.redis.get(client.keys.outcome(memory_id))
        status = json.loads(raw).get("status") if raw else None
        out["held" if status == "held" else "lost"].append(entry)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.seconds = args.seconds or (120.0 if args.quick else 1800.0)
    args.max_active = args.max_active or (300 if args.quick else 2000)
    args.every = args.every or (5.0 if args.quick else 10.0)
    args.sweep_every = args.sweep_every or (5.0 if args.quick else 30.0)
    args.cold_every = args.cold_every or (10.0 if args.quick else 120.0)
    with embedded_redis("balanced") as url, tempfile.TemporaryDirectory(prefix="hs-soak-") as tmp:
        import redis

        with redis.Redis.from_url(url) as r:
            redis_pid = int(r.info("server")["process_id"])
        return asyncio.run(soak(args, url, redis_pid, Path(tmp)))
