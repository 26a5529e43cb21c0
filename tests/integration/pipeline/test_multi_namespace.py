"""Many namespaces, one worker: fair rounds, the namespace registry, the CLI's --all-namespaces."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, ConfigError, Settings, Worker
from hindsight_redis.core.keys import Keys, namespace_registry
from hindsight_redis.ops.admin import delete_namespace
from hindsight_redis.providers.embedders import Embedder
from hindsight_redis.settings import EmbeddingSettings
from tests.integration.helpers import FailOn, wait_for


def _on(settings: Settings, namespace: str) -> Settings:
    return settings.model_copy(update={"namespace": namespace})


async def _processed(client: AsyncMemoryClient) -> int:
    return int((await client.stats())["processed"])


async def _processed_at_least(client: AsyncMemoryClient, count: int) -> bool:
    return await _processed(client) >= count


async def _registered(redis: Redis, settings: Settings) -> set[str]:
    return {m.decode() for m in await redis.smembers(namespace_registry(settings.key_prefix))}  # type: ignore[misc]


async def _write(settings: Settings, namespace: str, texts: Sequence[str]) -> None:
    async with AsyncMemoryClient(_on(settings, namespace)) as client:
        for first in range(0, len(texts), 500):
            await client.write_many([{"content": t} for t in texts[first : first + 500]])


def _facts(tag: str, count: int) -> list[str]:
    return [f"Ticket {tag}-{n} was closed by agent {n % 7} after {n} minutes" for n in range(count)]


Background = Callable[[Worker], Worker]


@pytest.fixture
async def background() -> AsyncIterator[Background]:
    """``background(worker)`` runs it for the rest of the test (stopped at teardown)."""
    running: list[tuple[Worker, asyncio.Task[object]]] = []

    def start(worker: Worker) -> Worker:
        running.append((worker, asyncio.create_task(worker.run_async())))
        return worker

    yield start
    for worker, _ in running:
        worker.stop()
    await asyncio.wait_for(asyncio.gather(*(task for _, task in running)), 30)


async def test_a_flooded_namespace_does_not_starve_the_others(
    settings: Settings, background: Background
) -> None:
    batch = 32
    small = settings.model_copy(update={"worker_batch_size": batch})
    flood = 2_000
    await _write(small, "flood", _facts("F", flood))
    background(Worker(small, namespaces=["flood", "alpha", "beta"], name="fair"))
    async with (
        AsyncMemoryClient(_on(small, "flood")) as flooded,
        AsyncMemoryClient(_on(small, "alpha")) as alpha,
        AsyncMemoryClient(_on(small, "beta")) as beta,
    ):
        await wait_for(lambda: _processed_at_least(flooded, batch))  # busy with the flood
        before = await _processed(flooded)
        start = time.perf_counter()

        async def timed(client: AsyncMemoryClient, text: str) -> float:
            receipt = await client.write(text, wait=True, timeout_s=15)
            assert receipt.status == "indexed"
            return time.perf_counter() - start

        lags = await asyncio.gather(
            *(timed(alpha, t) for t in _facts("A", 3)), *(timed(beta, t) for t in _facts("B", 3))
        )
        during = await _processed(flooded) - before
        served_at = time.perf_counter()
        await wait_for(lambda: _processed_at_least(flooded, flood))
        rest_s = time.perf_counter() - served_at
    # Round-robin: the small writes waited about a round (a batch of the flood),
    # where a FIFO worker would have drained the whole flood (~1,900 more) first.
    assert during <= 4 * batch, (during, lags)
    assert max(lags) < rest_s, (lags, rest_s)  # served long before the flood was drained


async def test_serving_every_namespace_picks_up_new_ones_and_lets_deleted_ones_go(
    settings: Settings, background: Background, redis: Redis
) -> None:
    quick = settings.model_copy(update={"namespace_refresh_s": 0.1})
    await _write(quick, "early", _facts("E", 2))
    worker = background(Worker(quick, namespaces="*", name="everyone"))
    async with AsyncMemoryClient(_on(quick, "early")) as early:
        await wait_for(lambda: _processed_at_least(early, 2))
    async with AsyncMemoryClient(_on(quick, "late")) as late:  # its first write registers it
        receipt = await late.write("The late tenant's deploy key rotates on Fridays", wait=True)
        assert receipt.status == "indexed"
        assert worker.namespaces == ["early", "late"]
        await delete_namespace(late.redis, late.keys)

    async def let_go() -> bool:
        return worker.namespaces == ["early"]

    await wait_for(let_go)
    assert not [k async for k in redis.scan_iter(match=Keys(quick.key_prefix, "late").pattern)]


async def test_writers_and_workers_register_their_namespace(
    settings: Settings, redis: Redis
) -> None:
    async with AsyncMemoryClient(_on(settings, "writer")) as client:
        await client.write("Invoices are sent on the first of the month")
        await client.write("The staging database is rebuilt every night")
        await client.write_many([{"content": "Backups are kept for thirty days"}])
    await Worker(_on(settings, "reader")).run_async(burst=True)
    assert await _registered(redis, settings) == {"writer", "reader"}


async def test_one_worker_loads_its_models_once_for_all_namespaces(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hindsight_redis.pipeline import assembly

    built: list[str] = []
    real = assembly.embedder_from_settings

    def counting(on: EmbeddingSettings) -> Embedder:
        built.append(on.embedder)
        return real(on)

    monkeypatch.setattr(assembly, "embedder_from_settings", counting)
    for namespace in ("a", "b", "c"):
        await _write(settings, namespace, _facts(namespace, 2))
    report = await Worker(settings, namespaces=["a", "b", "c"]).run_async(burst=True)
    assert report.indexed == 6
    assert built == ["hash"]


async def test_failures_are_retried_and_dead_lettered_in_their_own_namespace(
    settings: Settings, redis: Redis
) -> None:
    quick = settings.model_copy(update={"max_deliveries": 2})
    await _write(quick, "a", ["Ticket P-1 is poison for the build at 9", *_facts("a", 2)])
    await _write(quick, "b", _facts("b", 3))
    worker = Worker(quick, namespaces=["a", "b"], extra_stages=[FailOn("poison")])
    report = await worker.run_async(burst=True)
    assert (report.indexed, report.dead_lettered) == (5, 1)
    assert await redis.xlen(Keys(quick.key_prefix, "a").dead_letters) == 1
    assert await redis.xlen(Keys(quick.key_prefix, "b").dead_letters) == 0


def test_namespaces_are_checked() -> None:
    for bad in ("one", [], ["ok", "not ok"], ["*"]):
        with pytest.raises(ConfigError):
            Worker(Settings(embedder="hash"), namespaces=bad)  # type: ignore[arg-type]


def test_worker_all_namespaces_burst_drains_several(
    cli_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from hindsight_redis.cli import main

    async def setup() -> None:
        for namespace in ("n1", "n2", "n3", "legacy"):
            await _write(cli_env, namespace, _facts(namespace, 5))
        raw = Redis.from_url(str(cli_env.redis_url))
        # A stream written before the registry existed: found by the one-off scan.
        await raw.srem(namespace_registry(cli_env.key_prefix), "legacy")  # type: ignore[misc]
        await raw.aclose()

    asyncio.run(setup())
    assert main(["worker", "--namespaces", "n1", "--burst"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] == 5
    assert main(["worker", "--all-namespaces", "--burst"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] == 15

    async def backlogs() -> dict[str, int]:
        out = {}
        for namespace in ("n1", "n2", "n3", "legacy"):
            async with AsyncMemoryClient(_on(cli_env, namespace)) as client:
                stats = await client.stats()
                out[namespace] = stats["backlog"] + stats["indexed"] - 5
        return out

    assert asyncio.run(backlogs()) == {"n1": 0, "n2": 0, "n3": 0, "legacy": 0}
