"""Redis at its ``maxmemory``, on an embedded server of the test's own: doctor fails on an
evicting policy; writes are refused retryably and whole; workers wait, then catch up."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from hindsight_redis import AsyncMemoryClient, RedisOutOfMemory, Settings, Worker
from hindsight_redis.cli import main
from hindsight_redis.core.models import WriteReceipt
from hindsight_redis.redis.server import EmbeddedServer, ServerState, get_profile
from tests.integration.helpers import wait_for


@pytest.fixture
def own_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerState]:
    """An embedded server (ephemeral) of this test alone, in ``tmp_path / "data"``."""
    monkeypatch.delenv("HINDSIGHT_REDIS_URL", raising=False)
    server = EmbeddedServer(tmp_path / "data", get_profile("ephemeral"), port=0)
    state = server.start()
    try:
        yield state
    finally:
        server.stop()


def _doctor(data: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["doctor", "--server-dir", str(data), "--profile", "ephemeral"])
    return code, capsys.readouterr().out


def test_doctor_fails_when_redis_may_evict_under_maxmemory(
    own_server: ServerState, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    plain = redis.Redis.from_url(own_server.url)
    try:
        # The embedded server refuses rather than evicts, explicitly.
        assert plain.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        code, out = _doctor(data, capsys)
        assert code == 0 and "no maxmemory (policy noeviction)" in out, out
        plain.config_set("maxmemory", "1gb")
        plain.config_set("maxmemory-policy", "allkeys-lru")
        code, out = _doctor(data, capsys)
        assert code == 1, out
        assert "maxmemory-policy is allkeys-lru with maxmemory 1024.0 MiB" in out
        assert "set maxmemory-policy noeviction" in out
        plain.config_set("maxmemory-policy", "noeviction")
        code, out = _doctor(data, capsys)
        assert code == 0 and "of maxmemory 1024.0 MiB" in out, out
    finally:
        plain.close()


async def test_at_maxmemory_writes_are_refused_whole_and_workers_wait_then_catch_up(
    own_server: ServerState,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings(
        redis_url=own_server.url,
        key_prefix="full",
        namespace="oom",
        profile="ephemeral",
        embedder="hash",
        contextual_embedder="none",
        server_dir=tmp_path / "data",
        worker_block_ms=50,
        worker_batch_size=20,
        claim_idle_ms=500,
        max_deliveries=3,  # Redis refuses commits longer than that: none is dead-lettered
    )
    plain = redis.Redis.from_url(own_server.url)
    workers: list[tuple[Worker, asyncio.Task[object]]] = []

    def start_worker(name: str) -> None:
        worker = Worker(settings, name=name)
        workers.append((worker, asyncio.create_task(worker.run_async())))

    async with AsyncMemoryClient(settings) as client:
        try:
            first = await client.write("The nightly batch job failed at 02:00", wait=False)
            await Worker(settings, name="before").run_async(burst=True)  # the index exists
            start_worker("running")  # consumes while Redis fills up
            # A little room left, then fill it.
            used = int(plain.info("memory")["used_memory"])
            plain.config_set("maxmemory", str(used + 512 * 1024))
            receipts: list[WriteReceipt] = [first]
            padding = "log line of the nightly batch job; " * 40  # ~1.4 KB a memory
            with pytest.raises(RedisOutOfMemory) as refused:
                for n in range(2000):  # 512 KB fills long before the end
                    batch = [{"content": f"Run {n}.{k} of job J-{k}: {padding}"} for k in range(5)]
                    receipts += await client.write_many(batch)
            error = refused.value
            assert error.retryable and "maxmemory" in str(error)
            assert "nothing was written" in str(error)
            accepted = len(receipts)
            assert accepted > 50  # some batches went in before the limit
            # Nothing half-written: every batch went in whole, or not at all.
            assert plain.xinfo_stream(client.keys.stream)["entries-added"] == accepted
            # Well over the limit from here on (the worker frees a little as it trims).
            plain.config_set("maxmemory", str(int(plain.info("memory")["used_memory"]) // 2))
            with pytest.raises(RedisOutOfMemory):  # a single write (a plain XADD) too
                await client.write("One more run of the nightly job")
            assert plain.xinfo_stream(client.keys.stream)["entries-added"] == accepted
            # Reads still answer, and doctor says how full Redis is.
            assert first.id in {hit.id for hit in await client.search("nightly batch job failed")}
            capsys.readouterr()
            doctor = ["doctor", "--redis-url", own_server.url, "--profile", "ephemeral"]
            assert await asyncio.to_thread(main, doctor) == 1
            out = capsys.readouterr().out
            assert "of its maxmemory" in out and "refuses every write" in out, out
            start_worker("late")  # cannot even create its consumer group: waits for room

            async def both_wait() -> bool:  # one with a batch it cannot commit, one to start
                said = [r.getMessage() for r in caplog.records if "maxmemory" in r.getMessage()]
                commits = [m for m in said if m.startswith("redis unavailable (cannot commit")]
                starts = [m for m in said if m.startswith("cannot start serving")]
                return len(commits) > settings.max_deliveries and bool(starts)

            await wait_for(both_wait, timeout_s=30)
            await asyncio.sleep(2)
            assert not any(task.done() for _, task in workers)  # they wait; none crashes
            stats = await client.stats()
            assert stats["processed"] < accepted and stats["dead_letters"] == 0, stats
            # Room again: the workers catch up by themselves, nothing lost or doubled.
            plain.config_set("maxmemory", "0")
            receipts.append(await client.write("The nightly job runs at 02:00 again"))

            async def drained() -> bool:
                stats = await client.stats()
                return stats["processed"] >= stats["accepted"] and stats["pending"] == 0

            await wait_for(drained, timeout_s=90)
        finally:
            for worker, _ in workers:
                worker.stop()
            for _, task in workers:
                await asyncio.wait_for(task, 30)
            plain.close()
        stats = await client.stats()
        assert stats["processed"] == stats["accepted"] == len(receipts), stats
        assert stats["dead_letters"] == 0
        assert all([await client.get(r.id) for r in receipts])
        docs = [k async for k in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*")]
        assert len(docs) == stats["indexed"] == len(receipts)
        with capsys.disabled():
            print(f"\nFAULT maxmemory: acknowledged={len(receipts)} lost=0 refused_at={accepted}")
