"""Faults short of a crash, with real processes: a hung worker, a frozen Redis, a data
directory that is read-only or full."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hindsight_redis import AsyncMemoryClient, RedisUnavailable, Settings, Worker
from hindsight_redis.cli import main
from hindsight_redis.redis.connection import SOCKET_TIMEOUT_S
from hindsight_redis.redis.server import EmbeddedServer, find_binaries, get_profile
from tests.integration.helpers import Drain, Gate, freeze, wait_for, wait_pid_gone

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


# -- a hung worker ------------------------------------------------------------------------


async def test_a_hung_worker_loses_its_batch_to_another_and_commits_nothing_twice(
    settings: Settings, drain: Drain
) -> None:
    fast = settings.model_copy(
        update={"claim_idle_ms": 1000, "worker_batch_size": 10, "contextual_embedder": "none"}
    )
    env = {**os.environ, **fast.to_env(), "PYTHONPATH": str(ROOT)}
    async with AsyncMemoryClient(fast) as client:
        receipts = await client.write_many(
            [{"content": f"Order {n} for customer {n * 31} ships via DHL"} for n in range(30)]
        )
        # Its first batch takes 3 s: time to stop it between read and commit.
        hung = subprocess.Popen(
            [sys.executable, str(HERE / "worker_process.py"), "3", "hung", "0"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:

            async def holds_a_batch() -> bool:
                return (await client.stats())["consumers"].get("hung", 0) > 0

            await wait_for(holds_a_batch, timeout_s=60)
            freeze(hung.pid)  # hangs mid-batch: no commit, no lease renewal
            held = (await client.stats())["consumers"]["hung"]
            rescue = await asyncio.wait_for(drain(fast, name="rescuer"), 60)
            assert rescue.indexed + rescue.merged + rescue.dropped == 30  # its batch too
            hung.send_signal(signal.SIGCONT)  # wakes up and commits its stale batch
            hung.send_signal(signal.SIGTERM)  # finish that batch, then exit
            out, _ = hung.communicate(timeout=60)
        finally:
            hung.kill()
        assert hung.returncode == 0
        report = json.loads(out.strip().splitlines()[-1])
        # It did commit its batch, and every commit found the write already done.
        assert report["already"] == held
        assert report["indexed"] == report["merged"] == report["dropped"] == 0
        stats = await client.stats()
        assert stats["processed"] == stats["accepted"] == 30 and stats["pending"] == 0
        assert all([await client.get(r.id) for r in receipts])
        docs = [k async for k in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*")]
        assert len(docs) == stats["indexed"]
        print(f"\nFAULT hung worker: {held} entries reclaimed, {report['already']} found done")


# -- a frozen Redis -----------------------------------------------------------------------


async def test_a_frozen_redis_times_clients_out_and_its_worker_commits_nothing_twice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = EmbeddedServer(tmp_path / "frozen", get_profile("durable"), port=0)
    state = server.start()
    settings = Settings(
        redis_url=state.url,
        key_prefix="frozen",
        profile="durable",
        embedder="hash",
        contextual_embedder="none",
        server_dir=tmp_path / "unused",
        worker_block_ms=50,
        worker_batch_size=10,
        claim_idle_ms=600_000,
    )
    gate = Gate()
    worker = Worker(settings, name="patient", extra_stages=[gate])
    task = asyncio.create_task(worker.run_async())
    try:
        async with AsyncMemoryClient(settings) as client:
            receipts = await client.write_many(
                [{"content": f"Host web-{n} runs nginx 1.{n} in rack R{n % 4}"} for n in range(20)]
            )
            await asyncio.wait_for(gate.in_flight.wait(), 60)
            freeze(state.pid)  # up, connected, and silent
            try:
                gate.release.set()  # the commit goes out and gets no reply
                started = time.monotonic()
                with pytest.raises(RedisUnavailable) as refused:
                    await client.write("The VPN gateway moved to 10.0.0.7")
                waited_s = time.monotonic() - started

                async def worker_timed_out() -> bool:
                    return any("redis unavailable" in r.getMessage() for r in caplog.records)

                # Frozen until the worker's commit has timed out too (its reply is lost).
                await wait_for(worker_timed_out, timeout_s=SOCKET_TIMEOUT_S + 20)
            finally:
                os.kill(state.pid, signal.SIGCONT)
            assert refused.value.retryable
            assert SOCKET_TIMEOUT_S - 0.5 < waited_s < SOCKET_TIMEOUT_S + 5  # timed out
            assert not task.done()
            assert any("redis unavailable" in r.getMessage() for r in caplog.records)
            receipts.append(await client.write("The VPN gateway moved to 10.0.0.9"))

            async def drained() -> bool:
                stats = await client.stats()
                return stats["processed"] >= stats["accepted"] and stats["pending"] == 0

            await wait_for(drained, timeout_s=60)
            stats = await client.stats()
            # The commit sent into the freeze ran when Redis woke up (or was redone by the
            # worker re-reading its entries): once either way.
            assert stats["processed"] == stats["accepted"] >= len(receipts)
            assert all([await client.get(r.id) for r in receipts])
            docs = [k async for k in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*")]
            assert len(docs) == stats["indexed"]
            print(f"\nFAULT frozen redis: write refused after {waited_s:.2f} s, lost=0 twice=0")
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
        server.stop()


# -- the data directory -------------------------------------------------------------------


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs /sys (read-only even for root)")
def test_a_read_only_data_dir_is_reported_by_server_start_and_doctor(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # chmod does not stop root; sysfs refuses new files to everyone.
    monkeypatch.delenv("HINDSIGHT_REDIS_URL", raising=False)
    assert main(["server", "start", "--server-dir", "/sys", "--redis-port", "0"]) == 2
    err = capsys.readouterr().err
    assert "data dir /sys is not writable" in err and "--server-dir" in err
    assert main(["doctor", "--server-dir", "/sys"]) == 1
    out = capsys.readouterr().out
    assert "not running" in out and "data dir /sys is not writable" in out


def test_a_data_dir_that_takes_no_more_bytes_is_refused_by_server_start(tmp_path: Path) -> None:
    # RLIMIT_FSIZE 0 stands in for a full disk: every write that grows a file fails.
    env = {k: v for k, v in os.environ.items() if k != "HINDSIGHT_REDIS_URL"}
    args = [sys.executable, "-m", "hindsight_redis.cli", "server", "start"]
    result = subprocess.run(
        [
            "bash",
            "-c",
            'ulimit -f 0 && exec "$@"',
            "-",
            *args,
            "--server-dir",
            str(tmp_path),
            "--redis-port",
            "0",
        ],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"data dir {tmp_path} is not writable" in result.stderr
    assert "File too large" in result.stderr


def _size_capped_server(tmp_path: Path, cap_kib: int) -> Path:
    """A redis-server launcher whose files stop growing at ``cap_kib`` (a soft limit the
    test lifts later): to Redis, as if its disk were full."""
    script = tmp_path / "redis-server-capped"
    script.write_text(
        "#!/bin/bash\n"
        "trap '' XFSZ\n"  # ignored: a write past the cap fails (EFBIG) instead of killing
        f"ulimit -S -f {cap_kib}\n"
        f'exec {find_binaries().server} "$@"\n'
    )
    script.chmod(0o755)
    return script


async def test_a_full_disk_is_reported_and_nothing_is_lost_once_there_is_room(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_REDIS_SERVER_BIN", str(_size_capped_server(tmp_path, 1024)))
    monkeypatch.delenv("HINDSIGHT_REDIS_URL", raising=False)
    data = tmp_path / "data"
    common = ["--server-dir", str(data), "--redis-port", "0", "--profile", "balanced"]
    assert main(["server", "start", *common]) == 0
    state = EmbeddedServer(data, get_profile("balanced")).state()
    assert state is not None
    settings = Settings(
        redis_url=state.url,
        key_prefix="full",
        profile="balanced",
        embedder="hash",
        contextual_embedder="none",
        server_dir=data,
        worker_block_ms=50,
        worker_batch_size=20,
    )
    worker = Worker(settings, name="waiting")
    task = asyncio.create_task(worker.run_async())
    try:
        async with AsyncMemoryClient(settings) as client:
            # one memory searchable before the disk fills
            receipts = [await client.write("The nightly batch job failed at 02:00", wait=True)]
            padding = "log line of the nightly batch job; " * 150  # ~5 KB a memory
            with pytest.raises(RedisUnavailable) as refused:
                for n in range(1000):  # 1 MiB of AOF fills the "disk" long before the end
                    receipts += await client.write_many(
                        [{"content": f"Run {n}.{k} of job J-{k}: {padding}"} for k in range(10)]
                    )
            assert refused.value.retryable and "cannot write to its disk" in str(refused.value)
            assert receipts  # some writes went in before the disk filled
            capsys.readouterr()
            assert await asyncio.to_thread(main, ["doctor", "--server-dir", str(data)]) == 1
            out = capsys.readouterr().out
            assert "refuses every write" in out and "MISCONF" in out and "redis.log" in out
            assert not task.done()  # the worker waits; it does not crash
            # Searches still answer: a search reads, and its hit counts are best-effort.
            found = await client.search("nightly batch job failed", mode="hybrid")
            assert receipts[0].id in {hit.id for hit in found}
            # Room again: Redis retries its AOF write and takes writes by itself.
            unlimited = resource.RLIM_INFINITY
            resource.prlimit(state.pid, resource.RLIMIT_FSIZE, (unlimited, unlimited))

            async def takes_writes() -> bool:
                try:
                    receipts.append(await client.write("The nightly job runs at 02:00 again"))
                except RedisUnavailable:
                    await asyncio.sleep(0.1)  # paces the retries of a refused write
                    return False
                return True

            await wait_for(takes_writes, timeout_s=30)

            async def drained() -> bool:
                stats = await client.stats()
                return stats["processed"] >= stats["accepted"] and stats["pending"] == 0

            await wait_for(drained, timeout_s=60)
            stats = await client.stats()
            assert stats["processed"] == stats["accepted"] == len(receipts)
            assert all([await client.get(r.id) for r in receipts])
            docs = [k async for k in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*")]
            assert len(docs) == stats["indexed"]
            capsys.readouterr()
            assert (
                await asyncio.to_thread(main, ["doctor", "--server-dir", str(data)]) == 0
            )  # and says so
            assert "disk_writes: ok" in capsys.readouterr().out
            with capsys.disabled():
                print(f"\nFAULT full disk: acknowledged={len(receipts)} lost=0")
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
        os.kill(state.pid, signal.SIGKILL)  # its files are capped: no final save
        wait_pid_gone(state.pid)
