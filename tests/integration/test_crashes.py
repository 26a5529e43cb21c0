"""Crashes lose nothing: a worker killed mid-batch, and Redis killed under ``durable``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import redis as redis_sync

from hindsight_redis import AsyncMemoryClient, MemoryClient, Settings, Worker
from hindsight_redis.server import EmbeddedServer, get_profile
from tests.conftest import Drain
from tests.integration.helpers import wait_for

HERE = Path(__file__).parent


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


def test_durable_profile_keeps_every_acknowledged_write_across_a_redis_kill(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "durable", get_profile("durable"), port=0)
    state = server.start()
    try:
        settings = Settings(
            redis_url=state.url, key_prefix="durable", profile="durable", embedder="hash",
            server_dir=tmp_path / "unused",
        )  # fmt: skip
        with MemoryClient(settings) as client:
            receipts = [
                client.write(f"Deploy {n} of service-{n} done at 10:{n % 60:02d}")
                for n in range(200)
            ]
            receipts += client.write_many(
                [{"content": f"Batch fact {n} about ticket T-{n}"} for n in range(300)]
            )
        os.kill(state.pid, signal.SIGKILL)  # no shutdown, no final save
        wait_pid_gone(state.pid)
        state = server.start()
        client2 = redis_sync.Redis.from_url(state.url)
        stream_ids = {
            e[0].decode() for e in client2.xrange(f"durable:{{{settings.namespace}}}:stream")
        }
        assert {r.stream_id for r in receipts} <= stream_ids
        assert len(stream_ids) == 500
        client2.close()
    finally:
        server.stop()


def wait_pid_gone(pid: int) -> None:
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"pid {pid} still alive")


async def test_worker_rides_out_a_redis_restart(tmp_path: Path) -> None:
    import asyncio

    first = EmbeddedServer(tmp_path / "restart", get_profile("durable"), port=0)
    state = first.start()
    same_port = EmbeddedServer(tmp_path / "restart", get_profile("durable"), port=state.port)
    settings = Settings(
        redis_url=state.url, key_prefix="restart", profile="durable", embedder="hash",
        server_dir=tmp_path / "unused", worker_block_ms=50, claim_idle_ms=500,
    )  # fmt: skip
    worker = Worker(settings, name="survivor")
    task = asyncio.create_task(worker.run_async())
    try:
        async with AsyncMemoryClient(settings) as client:
            receipts = await client.write_many(
                [
                    {"content": f"Ticket T-{n} was closed by agent {n % 7} after {n} minutes"}
                    for n in range(50)
                ]
            )

            async def processed(count: int) -> bool:
                return (await client.stats())["processed"] >= count

            await wait_for(lambda: processed(50), timeout_s=60)
        os.kill(state.pid, signal.SIGKILL)  # Redis dies under the running worker
        wait_pid_gone(state.pid)
        state = same_port.start()
        async with AsyncMemoryClient(settings) as client:
            receipts += await client.write_many(
                [
                    {"content": f"Invoice I-{n} for customer {n * 3} is due in {n} days"}
                    for n in range(50)
                ]
            )
            await wait_for(lambda: processed(100), timeout_s=60)
            assert not task.done()  # the worker survived the outage
            outcomes = [await client.get(r.id) for r in receipts]
            assert all(o is not None for o in outcomes)
            assert (await client.stats())["backlog"] == 0
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
        same_port.stop()
