"""Shared fixtures: one embedded Redis per test session, a key prefix per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start the embedded Redis (search + JSON modules) once; yield its URL."""
    from hindsight_redis.server import EmbeddedServer, get_profile

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


@pytest.fixture
def settings(redis_server: str, key_prefix: str, tmp_path: Path):  # type: ignore[no-untyped-def]
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
