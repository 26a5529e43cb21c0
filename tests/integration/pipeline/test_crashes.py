"""Crashes lose nothing: a worker killed mid-batch, Redis killed mid-writes under
``durable`` and ``balanced``, and Redis down for 5 s under a worker with a batch in flight."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from hindsight_redis import (
    AsyncMemoryClient,
    MemoryClient,
    RedisUnavailable,
    Settings,
    Worker,
    WriteReceipt,
)
from hindsight_redis.core.resp import as_text
from hindsight_redis.redis.server import EmbeddedServer, get_profile
from tests.integration.helpers import Drain, Gate, wait_for, wait_pid_gone

HERE = Path(__file__).parents[1]  # the worker processes live beside the fixtures


def _worker_env(settings: Settings) -> dict[str, str]:
    env = {**os.environ, **settings.to_env()}
    env.update(
        HINDSIGHT_WORKER_BATCH_SIZE="25",
        HINDSIGHT_WORKER_BLOCK_MS="50",
        PYTHONPATH=str(HERE.parent.parent),
    )
    return env


async def test_worker_killed_mid_batch_loses_nothing_and_indexes_once(
    settings: Settings, drain: Drain
) -> None:
    fast = settings.model_copy(update={"claim_idle_ms": 300})
    async with AsyncMemoryClient(fast) as client:
        receipts = await client.write_many(
            [
                {
                    "content": f"Order {n} for customer {n * 31} ships on "
                    f"2026-05-{n % 28 + 1:02d} via DHL"
                }
                for n in range(400)
            ]
        )
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "worker_process.py"), "0.1", "doomed", "60"],
            env=_worker_env(fast),
        )

        async def mid_batch() -> bool:
            # The first batch (25) fully processed and the second (parked for
            # 60 s) in hand: a kill now cannot race the first batch's acks.
            stats = await client.stats()
            return stats["consumers"].get("doomed", 0) > 0 and stats["processed"] >= 25

        try:
            await wait_for(mid_batch, timeout_s=60)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        stats = await client.stats()
        assert (
            stats["consumers"].get("doomed", 0) > 0
        )  # the dead worker held unacknowledged entries
        assert stats["processed"] < 400
        report = await drain(fast, name="rescuer")
        assert report.indexed + report.merged + report.dropped > 0
        stats = await client.stats()
        assert stats["processed"] == 400 and stats["pending"] == 0 and stats["backlog"] == 0
        outcomes = [await client.get(r.id) for r in receipts]
        assert all(o is not None for o in outcomes)  # every accepted write has an outcome
        indexed = [o for o in outcomes if o is not None and o.status == "active"]
        assert len(indexed) == stats["indexed"]  # exactly once: counter == stored documents
        doc_keys = [
            k async for k in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*", count=1000)
        ]
        assert len(doc_keys) == stats["indexed"]


async def test_an_entry_that_kills_its_worker_is_dead_lettered_alone(
    settings: Settings,
) -> None:
    # Batches of 32: reclaimed entries rerun in batches of 2, then alone.
    fast = settings.model_copy(update={"claim_idle_ms": 300, "max_deliveries": 4})
    env = {**_worker_env(fast), "HINDSIGHT_WORKER_BATCH_SIZE": "32"}
    async with AsyncMemoryClient(fast) as client:
        texts = [
            f"Shipment {n} for client {n * 37} leaves dock {n % 9} at {n % 12 + 1} pm"
            for n in range(40)
        ]
        texts[5] = "Shipment 5 carries the fatal crate for client 185"
        receipts = await client.write_many([{"content": t} for t in texts])

        async def claimable() -> bool:
            """Every pending entry (the dead worker's batch) idle for ``claim_idle_ms``."""
            pending = await client.redis.xpending_range(
                client.keys.stream, client.keys.group, min="-", max="+", count=len(texts)
            )
            return all(p["time_since_delivered"] >= fast.claim_idle_ms for p in pending)

        deaths = 0
        for _ in range(12):  # each run dies on the poison's batch, or drains the stream
            proc = subprocess.run(
                [sys.executable, str(HERE / "fatal_worker_process.py"), "fatal crate"],
                env=env,
                timeout=120,
            )
            if proc.returncode == 0:
                break
            assert proc.returncode == 70  # killed by the poison, nothing else
            deaths += 1
            await wait_for(claimable)  # the next worker reclaims them before reading new ones
        # Delivered 4 times, it killed 4 workers: with its whole first batch, with one
        # batch-mate, then alone twice; no batch-mate was delivered more than 3 times.
        assert deaths == 4
        letters = await client.dead_letters()
        assert [dl.memory_id for dl in letters] == [receipts[5].id]
        assert "worker died" in letters[0].error
        stats = await client.stats()
        assert stats["processed"] == 40 and stats["pending"] == 0 and stats["backlog"] == 0
        for n, receipt in enumerate(receipts):  # every other write stored (or merged)
            record = await client.get(receipt.id)
            if n != 5:
                assert record is not None and record.status in ("active", "merged"), n
        assert stats["indexed"] + stats["merged"] == 39


def test_sigterm_finishes_the_batch_and_exits_cleanly(settings: Settings) -> None:
    with MemoryClient(settings) as client:
        client.write_many(
            [{"content": f"Invoice {n} of ACME is due 2026-07-{n % 28 + 1:02d}"} for n in range(60)]
        )
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "worker_process.py"), "0.5", "graceful"],
            env=_worker_env(settings),
        )
        try:
            import time

            deadline = time.monotonic() + 60
            while client.stats()["consumers"].get("graceful", 0) == 0:
                assert time.monotonic() < deadline
                time.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        finally:
            proc.kill()
        stats = client.stats()
        assert stats["consumers"].get("graceful", 0) == 0  # nothing left unacknowledged
        assert stats["processed"] > 0


# -- Redis killed -----------------------------------------------------------------------

_KILL_AFTER = 2000  # acknowledged writes before Redis is killed


async def _write_until_refused(
    client: AsyncMemoryClient, acked: list[tuple[float, WriteReceipt]], calls: list[int]
) -> None:
    """Write (single writes and batches of 5 in turn) until Redis is gone; every
    acknowledged write goes to ``acked`` with the time of its acknowledgement."""
    n = 0
    while True:
        try:
            if n % 2:
                items = [{"content": f"Batch fact {n}.{k} about ticket T-{n}"} for k in range(5)]
                receipts = await client.write_many(items)
            else:
                receipts = [await client.write(f"Deploy {n} of service-{n % 97} done")]
        except RedisUnavailable:
            return
        now = time.monotonic()
        acked += [(now, r) for r in receipts]
        calls.append(len(receipts))
        n += 1


async def _waitaof_calls(redis: Any) -> int:
    """How many ``WAITAOF`` commands the server has run (``INFO commandstats``)."""
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_waitaof", {}).get("calls", 0))


@pytest.mark.parametrize("profile", ["durable", "balanced"])
async def test_a_redis_kill_mid_writes_loses_no_acknowledged_write(
    tmp_path: Path, profile: str
) -> None:
    # A process kill leaves the page cache alone: what Redis wrote(2) survives it under
    # any fsync policy, so the kill cannot tell durable from balanced (or appendfsync no).
    # What tells them apart is asserted directly: the fsync policy, and WAITAOF.
    server = EmbeddedServer(tmp_path / profile, get_profile(profile), port=0)
    state = server.start()
    try:
        settings = Settings(
            redis_url=state.url,
            key_prefix="kill",
            profile=profile,
            embedder="hash",
            server_dir=tmp_path / "unused",
        )
        acked: list[tuple[float, WriteReceipt]] = []
        calls: list[int] = []
        async with AsyncMemoryClient(settings) as client, Redis.from_url(state.url) as probe:
            config = await probe.config_get("appendfsync")
            policy = {as_text(k): as_text(v) for k, v in config.items()}["appendfsync"]
            writer = asyncio.create_task(_write_until_refused(client, acked, calls))

            async def enough() -> bool:
                return len(acked) >= _KILL_AFTER or writer.done()

            await wait_for(enough, timeout_s=120)
            calls_before = len(calls)
            waitaof = await _waitaof_calls(probe)
            calls_after = len(calls)
            os.kill(state.pid, signal.SIGKILL)  # writes in flight; no shutdown, no final save
            killed_at = time.monotonic()
            await asyncio.wait_for(writer, 30)
        wait_pid_gone(state.pid)
        state = server.start()  # the same data dir: Redis replays its AOF
        async with AsyncMemoryClient(
            settings.model_copy(update={"redis_url": state.url})
        ) as client:
            stored = {as_text(i) for i, _ in await client.redis.xrange(client.keys.stream)}
        lost = [(at, r) for at, r in acked if r.stream_id not in stored]
        print(
            f"\nFAULT kill -9 profile={profile} appendfsync={policy} acknowledged={len(acked)} "
            f"calls={calls_before} waitaof={waitaof} lost={len(lost)}"
        )
        assert len(acked) >= _KILL_AFTER
        if profile == "durable":
            assert policy == "always"
            # Every acknowledged call was confirmed by a WAITAOF (one that did not report the
            # write fsynced would have raised WriteTimeout in the writer): at most the call
            # in flight had its WAITAOF run and no acknowledgement yet.
            assert calls_before <= waitaof <= calls_after + 1
            assert lost == []
        else:
            assert policy == "everysec" and waitaof == 0  # acknowledged before any fsync
            # With everysec Redis may hold its write(2) back for up to 2 s while a slow
            # background fsync runs, and still reply: only such writes may be lost.
            assert all(killed_at - at < 2.5 for at, _ in lost), lost[:3]
    finally:
        server.stop()


# -- Redis down under a running worker and client -------------------------------------------


def _outage_settings(url: str, tmp_path: Path) -> Settings:
    # claim_idle_ms of 10 minutes: no entry is reclaimed in this test, so the batch in
    # flight at the outage can only be finished by its worker re-reading its own entries.
    return Settings(
        redis_url=url,
        key_prefix="outage",
        profile="durable",
        embedder="hash",
        contextual_embedder="none",
        server_dir=tmp_path / "unused",
        worker_block_ms=50,
        worker_batch_size=10,
        claim_idle_ms=600_000,
    )


async def _everything_processed_once(
    client: AsyncMemoryClient, receipts: list[WriteReceipt], worker: Worker
) -> None:
    """Wait until every write the stream accepted was processed; check nothing was lost
    (every acknowledged write has an outcome) and nothing committed twice."""

    async def drained() -> bool:
        stats = await client.stats()
        return stats["processed"] >= stats["accepted"] and stats["pending"] == 0

    await wait_for(drained, timeout_s=60)
    stats = await client.stats()
    assert stats["processed"] == stats["accepted"] >= len(receipts)
    assert stats["backlog"] == 0
    outcomes = [await client.get(r.id) for r in receipts]
    assert all(o is not None for o in outcomes)
    docs = [k async for k in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*")]
    assert len(docs) == stats["indexed"]  # each memory stored once
    assert worker.report.already == 0  # no batch was committed a second time


async def test_a_redis_outage_mid_batch_loses_nothing_and_needs_no_restart(
    tmp_path: Path,
) -> None:
    first = EmbeddedServer(tmp_path / "outage", get_profile("durable"), port=0)
    state = first.start()
    same_port = EmbeddedServer(tmp_path / "outage", get_profile("durable"), port=state.port)
    settings = _outage_settings(state.url, tmp_path)
    gate = Gate()
    worker = Worker(settings, name="survivor", extra_stages=[gate])
    task = asyncio.create_task(worker.run_async())
    try:
        async with AsyncMemoryClient(settings) as client:
            receipts = await client.write_many(
                [
                    {"content": f"Ticket T-{n} was closed by agent {n % 7} after {n} min"}
                    for n in range(30)
                ]
            )
            await asyncio.wait_for(gate.in_flight.wait(), 60)
            assert (await client.stats())["consumers"] == {"survivor": gate.held}
            os.kill(state.pid, signal.SIGKILL)
            wait_pid_gone(state.pid)
            gate.release.set()  # the batch goes on to its commit: Redis is gone
            refused_s = []
            back_at = time.monotonic() + 5.0  # Redis stays away for 5 s
            while time.monotonic() < back_at:
                started = time.monotonic()
                with pytest.raises(RedisUnavailable) as refused:
                    await client.write("The standup moved to 10:30 on Thursdays")
                refused_s.append(time.monotonic() - started)
                assert refused.value.retryable
                # Not a wait: a write every 0.25 s for as long as the outage lasts.
                await asyncio.sleep(0.25)
            assert max(refused_s) < 2.0  # refused at once, not after a long hang
            state = same_port.start()
            assert not task.done()  # the worker waited the outage out
            # The same client, not restarted, writes again.
            receipts.append(await client.write("Invoice I-7 for ACME is due in 30 days"))
            receipts += await client.write_many(
                [{"content": f"Server db-{n} was patched to kernel 6.{n}"} for n in range(10)]
            )
            await _everything_processed_once(client, receipts, worker)
            print(
                f"\nFAULT redis down 5 s mid-batch: {len(refused_s)} writes refused in "
                f"<= {max(refused_s):.3f} s, acknowledged={len(receipts)} lost=0 twice=0"
            )
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
        same_port.stop()
