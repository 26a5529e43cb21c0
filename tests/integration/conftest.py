"""Fixtures of the integration tests: one embedded Redis per test session, a key prefix
per test, clients and workers on it, MiniLM once, the environment of a CLI run.

Integration tests get ``settings`` (their own key prefix on the session's
server), ``client`` / ``sync_client`` (connected to it), ``worker`` (one
consuming in the background), ``drain`` (a burst worker run) and ``redis``
(a plain client, to look under the hood). After each such test,
``_own_keys_only`` removes the test's keys and indexes and fails the test if
it left anything outside its prefix, so tests can never see (or depend on)
each other's data.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from redis.asyncio import Redis

from tests.integration.helpers import Drain

if TYPE_CHECKING:
    from hindsight_redis import AsyncMemoryClient, MemoryClient, Settings, Worker
    from hindsight_redis.pipeline.worker import WorkerReport
    from hindsight_redis.providers.contextual import MiniLMEmbedder


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start the embedded Redis (search + JSON modules) once; yield its URL."""
    from hindsight_redis.redis.server import EmbeddedServer, get_profile

    server = EmbeddedServer(tmp_path_factory.mktemp("redis"), get_profile("ephemeral"), port=0)
    state = server.start()
    try:
        yield state.url
    finally:
        server.stop()


@pytest.fixture
def key_prefix() -> str:
    """A prefix no other test uses, so tests never see each other's keys."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture(autouse=True)
def _own_keys_only(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test on the session's server: drop its keys and indexes, fail on strays."""
    if "redis_server" not in request.fixturenames:
        yield
        return
    import redis

    prefix: str = request.getfixturevalue("key_prefix")
    url: str = request.getfixturevalue("redis_server")
    yield
    client = redis.Redis.from_url(url)
    try:
        for name in client.execute_command("FT._LIST"):
            # "{prefix}:{namespace}:idx:g<N>"; before 0.2, "{prefix}-{namespace}-idx-g<N>"
            if name.decode().startswith((f"{prefix}:", f"{prefix}-")):
                client.execute_command("FT.DROPINDEX", name)
        mine = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(mine), 1000):
            client.delete(*mine[start : start + 1000])
        strays = list(client.scan_iter(count=1000))
        if strays:
            client.delete(*strays)  # so the next test is not blamed
            shown = ", ".join(sorted(k.decode() for k in strays)[:5])
            pytest.fail(f"test left {len(strays)} key(s) outside its prefix {prefix}: {shown}")
    finally:
        client.close()


@pytest.fixture
def settings(redis_server: str, key_prefix: str, tmp_path: Path) -> Settings:
    """Settings pointing at the session's server, with this test's own prefix."""
    from hindsight_redis.settings import Settings

    return Settings(
        redis_url=redis_server,
        key_prefix=key_prefix,
        namespace="test",
        profile="ephemeral",
        embedder="hash",
        server_dir=tmp_path / "server",
        worker_block_ms=50,
        claim_idle_ms=500,
    )


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[AsyncMemoryClient]:
    """An ``AsyncMemoryClient`` on the test's settings, connected."""
    from hindsight_redis import AsyncMemoryClient

    async with AsyncMemoryClient(settings) as connected:
        yield connected


@pytest.fixture
def sync_client(settings: Settings) -> Iterator[MemoryClient]:
    """A ``MemoryClient`` on the test's settings."""
    from hindsight_redis import MemoryClient

    with MemoryClient(settings) as connected:
        yield connected


@pytest.fixture
async def worker(settings: Settings) -> AsyncIterator[Worker]:
    """A worker consuming in the background for the whole test (stopped at teardown)."""
    import asyncio

    from hindsight_redis import Worker

    running = Worker(settings, name="test-worker")
    task = asyncio.create_task(running.run_async())
    yield running
    running.stop()
    await asyncio.wait_for(task, 30)


@pytest.fixture
def drain(settings: Settings) -> Drain:
    """``await drain()``: a worker drains the stream (``run_async(burst=True)``) and reports.

    ``drain(other_settings, **worker_options)`` runs one on other settings
    (``Worker`` keyword arguments: ``name``, ``stages``, ``extra_stages``).
    """
    from hindsight_redis import Worker

    async def run(on: Settings | None = None, **options: Any) -> WorkerReport:
        worker: Worker = Worker(on or settings, **options)
        return await worker.run_async(burst=True)

    return run


@pytest.fixture
async def redis(settings: Settings) -> AsyncIterator[Redis]:
    """A plain redis-py client on the test's server (for looking under the hood)."""
    client = Redis.from_url(settings.redis_url or "")
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The contextual model, loaded once per session."""
    from hindsight_redis.providers.contextual import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """HINDSIGHT_* variables for ``cli.main`` runs on the test's settings."""
    monkeypatch.setenv("HINDSIGHT_REDIS_URL", str(settings.redis_url))
    monkeypatch.setenv("HINDSIGHT_KEY_PREFIX", settings.key_prefix)
    monkeypatch.setenv("HINDSIGHT_NAMESPACE", settings.namespace)
    monkeypatch.setenv("HINDSIGHT_EMBEDDER", "hash")
    monkeypatch.setenv("HINDSIGHT_PROFILE", "ephemeral")
    return settings
