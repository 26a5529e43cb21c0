"""Fixtures of the integration tests: a raw client on the session's server, MiniLM once,
the environment of a CLI run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest
from redis.asyncio import Redis

if TYPE_CHECKING:
    from hindsight_redis.providers.contextual import MiniLMEmbedder
    from hindsight_redis.settings import Settings


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
