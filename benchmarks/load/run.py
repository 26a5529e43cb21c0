"""Load: agents writing and searching at once, 2 workers, then an audit of every write.

One embedded Redis (profile ``balanced``, the default) for the run, a fresh
key prefix and namespace, default settings otherwise (``local`` static
embedder on the write path, MiniLM refined in the workers' background, the
filters on). Two ``hindsight-redis worker`` processes. The run:

1. seed: ``--seed`` LoCoMo turns (the last conversation) written and drained,
   their contextual vectors added, so searches have something to find;
2. idle: the parent's client searches alone for ``--idle-seconds``, one at a
   time with the agents' pauses (the baseline); it searches the same way
   during the load, beside the agents;
3. load: ``--agents`` processes (spawned) each loop for ``--seconds``, one call
   at a time with a pause of ``--think-ms`` on average (exponential) between
   calls: hybrid searches (LoCoMo questions), single writes, ``write_many``
   batches, writes with idempotency keys and deliberate retries of them
   (at once, later, in batches, a key twice in one batch, one key raced by
   every agent), some ``wait=True``. Contents: LoCoMo turns and observations
   (facts about the speakers), work notes, chit-chat the filters drop, exact
   and near repeats for dedup. Every receipt goes to a per-agent file. The
   parent samples ``client.stats()`` every second;
4. drain, stop the workers, audit every receipt against what Redis holds
   (``Audit``), delete the namespace, plot ``benchmarks/results/load.png`` (needs
   matplotlib: ``pip install -e ".[bench]"``; skipped without it).

Backpressure refusals are counted apart (``refused``), not as errors. The baseline of the
search figures is the idle phase's, measured in the same run: the ratio is the load's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import random
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import locomo
from benchmarks.harness import embedded_redis, start_workers, stop_workers
from benchmarks.load.agents import Run, agent_main, locomo_questions, read_logs, settings_for
from benchmarks.load.audit import audit
from benchmarks.load.report import plot, print_report, timeline
from benchmarks.measure import percentile
from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.ops.admin import delete_namespace

SUMMARY = "8 agents writing and searching for 60 s: nothing lost, search under load vs idle"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", type=int, help="agent processes (default 8; quick 3)")
    parser.add_argument("--seconds", type=float, help="the load (default 60; quick 10)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--think-ms", type=float, default=100.0, help="mean pause between an agent's calls"
    )
    parser.add_argument("--seed", type=int, help="LoCoMo turns written first (600; quick 150)")
    parser.add_argument("--idle-seconds", type=float, help="the idle searches (15; quick 3)")
    parser.add_argument("--refine-wait-s", type=float, default=120.0)
    parser.add_argument("--rng-seed", type=int, default=1)
    parser.add_argument(
        "--contextual", default=None, help="contextual_embedder (default: the default, MiniLM)"
    )


# -- the parent: sampling, idle searches -------------------------------------------------


@dataclass
class Sampler:
    """``client.stats()`` every second, in the background."""

    client: AsyncMemoryClient
    rows: list[dict[str, float]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    async def _loop(self) -> None:
        while True:
            s = await self.client.stats()
            self.rows.append(
                {
                    "ts": time.time(),
                    "accepted": s["accepted"],
                    "processed": s["processed"],
                    "backlog": s["backlog"],
                    "lag_s": s["index_lag_s"] or 0.0,
                    "pending": s["pending"],
                    "refine_pending": s["refine_pending"] or 0,
                    "dead_letters": s["dead_letters"],
                }
            )
            await asyncio.sleep(1.0)

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


async def wait_until(predicate: Any, timeout_s: float, what: str) -> bool:
    """Poll ``await predicate()`` every 0.2 s; False (and a message) on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(0.2)
    print(f"warning: {what} not reached within {timeout_s:.0f} s")
    return False


async def drained(client: AsyncMemoryClient) -> bool:
    s = await client.stats()
    return bool(s["backlog"] == 0 and s["pending"] == 0)


async def seed(client: AsyncMemoryClient, texts: list[str]) -> list[dict[str, Any]]:
    """Write the seed turns in batches; their receipts in the agents' log format."""
    out = []
    for first in range(0, len(texts), 100):
        items = [
            {"content": t, "source": f"seed:{first + n}", "task_type": "dialogue"}
            for n, t in enumerate(texts[first : first + 100])
        ]
        for item, r in zip(items, await client.write_many(items), strict=True):
            out.append(
                {
                    "k": "r",
                    "op": "seed",
                    "id": r.id,
                    "sid": r.stream_id,
                    "dup": r.duplicate,
                    "status": r.status,
                    "key": None,
                    "src": item["source"],
                    "wait": False,
                }
            )
    return out


async def probe(
    client: AsyncMemoryClient, questions: list[str], until: float, pause_s: float, agents: int
) -> list[float]:
    """One client's searches until ``until`` (epoch), one at a time, pausing like an agent."""
    rng = random.Random(7)
    out = []
    while time.time() < until:
        kwargs: dict[str, Any] = {"top_k": 5}
        if rng.random() < 0.2:
            kwargs["agent_id"] = f"agent-{rng.randrange(agents)}"
        t0 = time.perf_counter()
        await client.search(rng.choice(questions), **kwargs)
        out.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(rng.expovariate(1 / pause_s) if pause_s else 0)
    return out


# -- main ----------------------------------------------------------------------------


def spawn_agents(run: Run, args: argparse.Namespace) -> tuple[list[Any], Any, Any, Any]:
    ctx = mp.get_context("spawn")
    ready, go, start = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
    procs = [
        ctx.Process(target=agent_main, args=(run, n, ready, go, start), name=f"agent-{n}")
        for n in range(args.agents)
    ]
    for proc in procs:
        proc.start()
    return procs, ready, go, start


@dataclass
class Phases:
    """What the run's phases hand each other."""

    run: Run
    settings: Settings
    questions: list[str]
    seeded: list[dict[str, Any]] = field(default_factory=list)
    idle_ms: list[float] = field(default_factory=list)
    probe_ms: list[float] = field(default_factory=list)
    t0: float = 0.0
    load_before: float = 0.0  # the machine's 1-minute load average before the run
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds during the load
    errors: Counter[str] = field(default_factory=Counter)


async def prepare(p: Phases, client: AsyncMemoryClient, args: argparse.Namespace) -> None:
    """Seed, drain, let the refiner finish, then the idle searches."""
    print(f"namespace {p.run.namespace!r}, prefix {p.run.key_prefix!r}; seeding {args.seed} turns")
    p.load_before = os.getloadavg()[0]
    p.seeded = await seed(client, locomo.texts()[-args.seed :])
    await wait_until(lambda: drained(client), 300, "seed drained")
    await wait_until(lambda: _refined(client), args.refine_wait_s, "seed's contextual vectors")
    print(f"idle searches for {args.idle_seconds:.0f} s")
    await client.search("warm-up: load the models", top_k=1)
    until = time.time() + args.idle_seconds
    p.idle_ms = await probe(client, p.questions, until, p.run.think_s, args.agents)


async def cpu_seconds(client: AsyncMemoryClient, workers: list[Any]) -> dict[str, float]:
    """CPU seconds used so far by Redis, the worker processes and this process."""
    info = await client.redis.info("cpu")
    ticks = os.sysconf("SC_CLK_TCK")
    worker_s = 0.0
    for proc in workers:
        with contextlib.suppress(OSError):  # Linux only; a missing figure is left out
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            worker_s += (int(fields[11]) + int(fields[12])) / ticks
    return {
        "redis": float(info["used_cpu_sys"]) + float(info["used_cpu_user"]),
        "workers": worker_s,
        "parent": time.process_time(),
    }


async def apply_load(
    p: Phases, client: AsyncMemoryClient, args: argparse.Namespace, workers: list[Any]
) -> None:
    """Start the agents together, probe searches beside them, wait for them and the drain."""
    procs, ready, go, start = spawn_agents(p.run, args)
    for _ in procs:
        await asyncio.to_thread(ready.get, True, 600)
    before = await cpu_seconds(client, workers)
    start.value = p.t0 = time.time() + 0.5
    go.set()
    print(f"load: {args.agents} agents for {args.seconds:.0f} s")
    await asyncio.sleep(max(0.0, p.t0 - time.time()))
    until = p.t0 + args.seconds
    p.probe_ms = await probe(client, p.questions, until, p.run.think_s, args.agents)
    for proc in procs:
        await asyncio.to_thread(proc.join, args.seconds + 120)
        if proc.exitcode != 0:
            p.errors[f"agent exit {proc.exitcode}"] += 1
            proc.kill()
    after = await cpu_seconds(client, workers)
    p.cpu_s = {name: after[name] - before[name] for name in after}
    await wait_until(lambda: drained(client), 300, "drained after the load")
    await asyncio.sleep(1.5)


async def load(args: argparse.Namespace, url: str, tmp: Path) -> dict[str, Any]:
    run = Run(
        url=url,
        key_prefix=f"load{uuid.uuid4().hex[:8]}",
        namespace=f"load-{uuid.uuid4().hex[:6]}",
        agents=args.agents,
        seconds=args.seconds,
        think_s=args.think_ms / 1000,
        seed_turns=args.seed,
        out_dir=str(tmp),
        rng_seed=args.rng_seed,
        contextual=args.contextual,
    )
    p = Phases(run, settings_for(run), locomo_questions())
    workers = start_workers(p.settings, args.workers, log_dir=tmp)
    async with AsyncMemoryClient(p.settings) as client:
        sampler = Sampler(client)
        sampler.start()
        try:
            await prepare(p, client, args)
            await apply_load(p, client, args, workers)
        finally:
            await sampler.stop()
            for proc in workers:
                if proc.poll() is not None:
                    p.errors[f"worker exit {proc.returncode}"] += 1
            stop_workers(workers)
        return await finish(p, client, args, sampler.rows)


async def finish(
    p: Phases, client: AsyncMemoryClient, args: argparse.Namespace, samples: list[dict[str, float]]
) -> dict[str, Any]:
    """Audit, report, delete the namespace, plot; returns the figures."""
    tmp = Path(p.run.out_dir)
    lines = read_logs(tmp)
    load_ids = {x["id"] for x in lines if x["k"] == "r"}
    write_errors = sum(1 for x in lines if x["k"] == "e" and x.get("op") != "search")
    receipts = p.seeded + [x for x in lines if x["k"] == "r"]
    found = await audit(client, receipts, load_ids, write_errors)
    p.errors.update(x["type"] for x in lines if x["k"] == "e")
    p.errors["dead_letter"] += len(found.dead_lettered)
    p.errors["wait receipt disagrees"] += len(found.wait_mismatch)
    p.errors += Counter()  # drop zero counts
    show_errors(lines, tmp)
    rows = [{**r, "t": r["ts"] - p.t0} for r in samples if r["ts"] >= p.t0 - 1]
    points = timeline(rows, [(x["t"], x["ms"]) for x in lines if x["k"] == "s"])
    figures = print_report(
        args,
        lines,
        found,
        points,
        idle_ms=p.idle_ms,
        probe_ms=p.probe_ms,
        errors=p.errors,
        load_before=p.load_before,
        cpu_s=p.cpu_s,
    )
    removed = await delete_namespace(client.redis, client.keys)
    left = [k async for k in client.redis.scan_iter(match=f"{p.run.key_prefix}*", count=1000)]
    print(f"cleanup: {removed:,} keys deleted, {len(left)} left under the prefix")
    o = found.outcomes
    plot(
        points,
        percentile(p.idle_ms, 50),
        args.seconds,
        f"{args.agents} agents, {args.workers} workers: {len(load_ids):,} writes "
        f"({o['indexed']:,} indexed, {o['merged']:,} merged, {o['dropped']:,} dropped)",
    )
    return figures


async def _refined(client: AsyncMemoryClient) -> bool:
    return bool(((await client.stats())["refine_pending"] or 0) == 0)


def show_errors(lines: list[dict[str, Any]], tmp: Path) -> None:
    """The first message of each error type, and what the workers logged."""
    seen: set[str] = set()
    for x in lines:
        if x["k"] == "e" and x["type"] not in seen:
            seen.add(x["type"])
            print(f"  first {x['type']} ({x['agent']}, t={x['t']:.1f} s): {x['msg']}")
    for path in sorted(tmp.glob("worker-*.log")):
        logged = [ln for ln in path.read_text().splitlines() if ln.strip()]
        if logged:
            print(f"  {path.name}: {len(logged)} log lines, last: {logged[-1][:200]}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.agents = args.agents or (3 if args.quick else 8)
    args.seconds = args.seconds or (10.0 if args.quick else 60.0)
    args.seed = args.seed or (150 if args.quick else 600)
    args.idle_seconds = args.idle_seconds or (3.0 if args.quick else 15.0)
    with embedded_redis("balanced") as url, tempfile.TemporaryDirectory(prefix="hs-load-") as tmp:
        return asyncio.run(load(args, url, Path(tmp)))
