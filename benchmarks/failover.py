"""Failover while busy: a Redis Cluster master killed (SIGKILL) under the load benchmark's agents.

A local cluster of 3 masters with 1 replica each (``LocalCluster``, as ``server start
--cluster 3 --replicas 1``), profile ``durable`` on every node and client (a write is
acknowledged once fsynced and on a replica). ``--namespaces`` namespaces picked by their hash
slot: the victim, then the other shards in turn, then the victim's shard again (4: the victim
and a sibling on one shard, one on each other shard). ``--agents`` of the load benchmark's
agents (``benchmarks.load.agents``: hybrid searches, single writes, batches, idempotent
writes and their retries, ``wait=True``, one call at a time, ``--think-ms`` between calls),
spread over the namespaces in turn, for ``--seconds``; ``--workers`` ``worker
--all-namespaces`` processes. Nothing written before: agents write and search from the start.

At ``--kill-at`` s into the load the master holding the victim's hash slot is killed with
SIGKILL; the cluster sees it failed after ``cluster-node-timeout`` (2 s) and promotes its
replica. ``--restart-after`` s after the kill the node is started again (its port, directory
and configuration): it must rejoin as a replica of the promoted node (``CLUSTER NODES``, link
up). Clients wait a failover out for up to ``cluster_retry_s`` (30 s here). After the load:
drain, stop the workers, and audit each namespace as the load benchmark does (``Audit``: every
acknowledged write indexed, merged or dropped once; nothing lost, nothing doubled).

Per namespace: its write pause (its longest gap between acknowledged writes that ends after the
kill; "resumed" counts from the kill), and how many acknowledgements each namespace got while
the victim's writes paused.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing as mp
import os
import signal
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from benchmarks.harness import start_workers, stop_workers
from benchmarks.load.agents import Run, agent_main, read_logs, settings_for
from benchmarks.load.audit import Audit, audit
from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.redis.cluster import as_cluster, node_of
from hindsight_redis.redis.connection import open_redis
from hindsight_redis.redis.server import get_profile
from hindsight_redis.redis.server.local_cluster import ClusterState, LocalCluster

SUMMARY = "kill -9 a cluster master under 8 agents, 2 workers: write pause, nothing lost, rejoin"
RETRY_S = 30.0  # cluster_retry_s of agents and workers: the longest a call waits a failover out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", type=int, help="agent processes (default 8; quick 4)")
    parser.add_argument("--namespaces", type=int, default=4, help="namespaces (default 4)")
    parser.add_argument("--seconds", type=float, help="the load (default 90; quick 45)")
    parser.add_argument("--kill-at", type=float, help="s into the load (default 25; quick 12)")
    parser.add_argument("--restart-after", type=float, help="s after the kill (30; quick 12)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--think-ms", type=float, default=100.0, help="mean pause between calls")
    parser.add_argument("--rng-seed", type=int, default=1)
    parser.add_argument(
        "--contextual",
        default="none",
        help="contextual_embedder (default none: the failover, not MiniLM, is measured)",
    )


def pick(redis: Redis, prefix: str, count: int) -> dict[str, str]:
    """``count`` namespace names and the master of each: the first on the victim's shard,
    then the other shards in turn, then the victim's again."""
    cluster = as_cluster(redis)
    assert cluster is not None
    masters = sorted(str(node.name) for node in cluster.get_primaries())
    homes = {f"ns{n}": str(node_of(redis, Keys(prefix, f"ns{n}").stream)) for n in range(1000)}
    victim = homes["ns0"]
    order = [victim] + [m for m in masters if m != victim]
    picked: dict[str, str] = {}
    for k in range(count):
        shard = order[k % len(order)]
        name = next(n for n, home in homes.items() if home == shard and n not in picked)
        picked[name] = shard
    return picked


async def until(check: Any, timeout_s: float) -> bool:
    """Poll ``check()`` (in a thread) every 0.1 s; False on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await asyncio.to_thread(check):
            return True
        await asyncio.sleep(0.1)
    return False


async def failover(
    cluster: LocalCluster, layout: ClusterState, home: str, t0: float, args: argparse.Namespace
) -> dict[str, Any]:
    """Kill the master ``home`` at ``--kill-at``, restart it ``--restart-after`` later; when
    each step happened (s since the load started)."""
    await asyncio.sleep(max(0.0, t0 + args.kill_at - time.time()))
    port = int(home.rsplit(":", 1)[1])
    replica = layout.replica_ports(layout.master_ports.index(port))[0]
    state = cluster.node(port).state()
    assert state is not None
    os.kill(state.pid, signal.SIGKILL)
    killed = time.time() - t0
    print(f"t={killed:.1f} s: killed the master on port {port} (pid {state.pid})")
    promoted = await until(lambda: cluster.roles().get(replica) == "master", 60)
    promoted_s = time.time() - t0
    print(f"t={promoted_s:.1f} s: replica {replica} promoted: {promoted}")
    await asyncio.sleep(max(0.0, t0 + killed + args.restart_after - time.time()))
    await asyncio.to_thread(cluster.node(port).start)
    restarted = time.time() - t0
    back = await until(lambda: cluster.master_of(port) == replica, 120)
    rejoined_s = time.time() - t0
    print(f"t={rejoined_s:.1f} s: node {port} restarted, a replica of {replica} again: {back}")
    return {
        "killed_port": port,
        "promoted_port": replica,
        "killed_s": killed,
        "promoted": promoted,
        "promoted_after_s": promoted_s - killed,
        "restarted_s": restarted,
        "rejoined_as_replica": back,
        "rejoined_after_restart_s": rejoined_s - restarted,
    }


def pauses(
    acks: dict[str, list[tuple[float, str]]], killed: float, victim: str
) -> dict[str, dict[str, Any]]:
    """Per namespace (its acknowledgements: when, which operation): its write pause, the
    longest gap between acknowledgements that ends after the kill (a write answered just
    before the kill may be read just after it), and its acknowledgements while the
    victim's writes paused."""
    gaps = {}
    for ns, ts in acks.items():
        after = [(a, b) for a, b in itertools.pairwise(ts) if b[0] > killed]
        gaps[ns] = max(after, key=lambda gap: gap[1][0] - gap[0][0], default=None)
    hit = gaps[victim]
    window = (killed, killed) if hit is None else (hit[0][0], hit[1][0])
    out = {}
    for ns, ts in acks.items():
        gap = gaps[ns]
        out[ns] = {
            "acks": len(ts),
            "pause_s": None if gap is None else gap[1][0] - gap[0][0],
            "paused_from_s": None if gap is None else gap[0][0],
            "resumed_after_kill_s": None if gap is None else gap[1][0] - killed,
            "resumed_by": None if gap is None else gap[1][1],
            "acks_during_victim_pause": sum(1 for t, _ in ts if window[0] < t < window[1]),
        }
    return out


async def drained(settings: Any, names: list[str], timeout_s: float) -> bool:
    """Every namespace's backlog and pending entries at 0 within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = 0
        for ns in names:
            async with AsyncMemoryClient(settings.model_copy(update={"namespace": ns})) as client:
                s = await client.stats()
                left += s["backlog"] + s["pending"]
        if not left:
            return True
        await asyncio.sleep(1.0)
    return False


async def under_load(
    args: argparse.Namespace, cluster: LocalCluster, layout: ClusterState, tmp: Path
) -> dict[str, Any]:
    base = Run(
        url=layout.url,
        key_prefix=f"fo{uuid.uuid4().hex[:8]}",
        namespace="-",
        agents=args.agents,
        seconds=args.seconds,
        think_s=args.think_ms / 1000,
        seed_turns=0,
        out_dir=str(tmp),
        rng_seed=args.rng_seed,
        contextual=args.contextual,
        settings=(("profile", "durable"), ("cluster_retry_s", RETRY_S)),
    )
    settings = settings_for(base)
    redis = await open_redis(layout.url, connection=settings.connection)
    try:
        homes = pick(redis, base.key_prefix, args.namespaces)
    finally:
        await redis.aclose()
    names = list(homes)
    victim = names[0]
    runs = [replace(base, namespace=names[n % len(names)]) for n in range(args.agents)]
    print(
        f"prefix {base.key_prefix!r}; namespaces and masters: "
        + ", ".join(f"{ns} {home}" for ns, home in homes.items())
        + f"; victim {victim}"
    )
    workers = start_workers(settings, args.workers, "--all-namespaces", log_dir=tmp)
    ctx = mp.get_context("spawn")
    ready, go, start = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
    procs = [
        ctx.Process(target=agent_main, args=(runs[n], n, ready, go, start), name=f"agent-{n}")
        for n in range(args.agents)
    ]
    for proc in procs:
        proc.start()
    load_before = os.getloadavg()[0]
    errors: Counter[str] = Counter()
    try:
        for _ in procs:
            await asyncio.to_thread(ready.get, True, 600)
        start.value = t0 = time.time() + 0.5
        go.set()
        print(f"load: {args.agents} agents on {len(names)} namespaces for {args.seconds:.0f} s")
        events = await failover(cluster, layout, homes[victim], t0, args)
        for proc in procs:
            await asyncio.to_thread(proc.join, max(0.0, t0 + args.seconds - time.time()) + 120)
            if proc.exitcode != 0:
                errors[f"agent exit {proc.exitcode}"] += 1
                proc.kill()
        load_after = os.getloadavg()[0]
        all_drained = await drained(settings, names, 300)
    finally:
        for worker in workers:
            if worker.poll() is not None:
                errors[f"worker exit {worker.returncode}"] += 1
        stop_workers(workers)
    lines = read_logs(tmp)
    ns_of = {f"agent-{n}": run.namespace for n, run in enumerate(runs)}
    acks = {
        ns: sorted((x["t"], x["op"]) for x in lines if x["k"] == "r" and ns_of[x["agent"]] == ns)
        for ns in names
    }
    per_ns = pauses(acks, events["killed_s"], victim)
    for ns in names:
        mine = [x for x in lines if ns_of.get(x["agent"]) == ns]
        failed = [x for x in mine if x["k"] == "e"]
        errors.update(x["type"] for x in failed)
        receipts = [x for x in mine if x["k"] == "r"]
        async with AsyncMemoryClient(settings.model_copy(update={"namespace": ns})) as client:
            found, unreceipted = await audit_namespace(client, receipts, failed)
        per_ns[ns].update(_audit_figures(found, homes[ns], failed))
        per_ns[ns]["accepted_by_failed_calls"] = unreceipted
    show_worker_logs(tmp)
    return {
        "agents": args.agents,
        "workers": args.workers,
        "seconds": args.seconds,
        "victim": victim,
        "events": events,
        "namespaces": per_ns,
        "drained": all_drained,
        "errors": dict(errors),
        "load_average": {"before": load_before, "at_end_of_load": load_after},
        "cores": os.cpu_count(),
    }


async def audit_namespace(
    client: AsyncMemoryClient, receipts: list[dict[str, Any]], failed: list[dict[str, Any]]
) -> tuple[Audit, int]:
    """The load benchmark's audit of one namespace, with the writes of calls that failed
    told apart: such a write may be stored without a receipt (a ``wait=True`` call that
    timed out after the append). Its memory is then no double: its ``source`` (one per
    write) is in no receipt and in no other memory."""
    tried = {src for x in failed for src in x.get("srcs", [])}
    # Each write of a failed call may have been appended: as many stream entries may lack
    # a receipt (the audit's allowance counts writes here, not calls).
    found = await audit(client, receipts, {x["id"] for x in receipts}, len(tried))
    answered = {x["src"] for x in receipts}
    doubled, unreceipted = [], 0
    for item in found.duplicated:
        memory_id, _, what = item.partition(": ")
        if what == "stored, but no write got this id":
            source = await client.redis.hget(client.keys.doc(memory_id), "source")
            if source is not None and (text := as_text(source)) in tried and text not in answered:
                unreceipted += 1
                continue
        doubled.append(item)
    found.duplicated = doubled
    return found, unreceipted


def show_worker_logs(tmp: Path) -> None:
    """What the workers logged (their warnings while the shard failed over)."""
    for path in sorted(tmp.glob("worker-*.log")):
        logged = [ln for ln in path.read_text().splitlines() if ln.strip()]
        print(f"  {path.name}: {len(logged)} log lines")
        for line in logged[:3] + (["  ...", *logged[-2:]] if len(logged) > 3 else []):
            print(f"    {line[:220]}")


def _audit_figures(found: Audit, home: str, failed: list[dict[str, Any]]) -> dict[str, Any]:
    for name, items in (("lost", found.lost), ("duplicated", found.duplicated)):
        for item in items[:5]:
            print(f"  {name}: {item}")
    for note in found.notes[:5]:
        print(f"  note: {note}")
    first: dict[str, str] = {}
    for x in failed:
        first.setdefault(x["type"], f"t={x['t']:.1f} s {x['op']}: {x['msg'][:160]}")
    for kind, said in first.items():
        print(f"  first {kind}: {said}")
    return {
        "master": home,
        "outcomes": dict(found.outcomes),
        "lost": len(found.lost),
        "duplicated": len(found.duplicated),
        "dead_lettered": len(found.dead_lettered),
        "index_lag_max_s": max(found.lags_s, default=0.0),
        "wait_receipts_disagreeing": len(found.wait_mismatch),
        "errors": dict(Counter(x["type"] for x in failed)),
    }


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def report(figures: dict[str, Any]) -> None:
    e = figures["events"]
    print(
        f"\n## Failover while busy: {figures['agents']} agents, {figures['workers']} workers, "
        f"{figures['seconds']:.0f} s, 3 masters + 3 replicas, durable; {figures['cores']} cores, "
        f"1-min load average {figures['load_average']['before']:.1f} before, "
        f"{figures['load_average']['at_end_of_load']:.1f} at the end of the load\n"
    )
    print(
        f"killed the master of {figures['victim']} (port {e['killed_port']}) at "
        f"t={e['killed_s']:.1f} s; replica {e['promoted_port']} promoted "
        f"{e['promoted_after_s']:.1f} s later; restarted at t={e['restarted_s']:.1f} s, a "
        f"replica in sync again {e['rejoined_after_restart_s']:.1f} s later "
        f"({'rejoined' if e['rejoined_as_replica'] else 'NOT rejoined'})\n"
    )
    print(
        "| namespace | master | acks | write pause s | resumed after kill s (by) | acks during the "
        "victim's pause | indexed / merged / dropped | lost | doubled | stored, call failed | "
        "index lag max s | errors |"
    )
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for ns, f in figures["namespaces"].items():
        o = f["outcomes"]
        mark = " (victim)" if ns == figures["victim"] else ""
        print(
            f"| {ns}{mark} | {f['master']} | {f['acks']:,} | {_s(f['pause_s'])} | "
            f"{_s(f['resumed_after_kill_s'])} ({f['resumed_by']}) | "
            f"{f['acks_during_victim_pause']:,} | "
            f"{o.get('indexed', 0):,} / {o.get('merged', 0):,} / {o.get('dropped', 0):,} | "
            f"{f['lost']} | {f['duplicated']} | {f['accepted_by_failed_calls']} | "
            f"{f['index_lag_max_s']:.1f} | "
            + (", ".join(f"{k} {v}" for k, v in f["errors"].items()) or "none")
            + " |"
        )
    victim = figures["namespaces"][figures["victim"]]
    lost = sum(f["lost"] for f in figures["namespaces"].values())
    doubled = sum(f["duplicated"] for f in figures["namespaces"].values())
    print(
        f"\nRESULT resumed_after_kill_s={_s(victim['resumed_after_kill_s'])} "
        f"pause_s={_s(victim['pause_s'])} lost={lost} duplicated={doubled} "
        f"rejoined={e['rejoined_as_replica']} drained={figures['drained']}"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.agents = args.agents or (4 if args.quick else 8)
    args.seconds = args.seconds or (45.0 if args.quick else 90.0)
    args.kill_at = args.kill_at or (12.0 if args.quick else 25.0)
    args.restart_after = args.restart_after or (12.0 if args.quick else 30.0)
    with tempfile.TemporaryDirectory(prefix="hs-failover-") as tmp:
        cluster = LocalCluster(
            Path(tmp) / "cluster", get_profile("durable"), masters=3, replicas=1, port=0
        )
        layout = cluster.start()
        try:
            figures = asyncio.run(under_load(args, cluster, layout, Path(tmp)))
        finally:
            cluster.stop()
    report(figures)
    return figures
