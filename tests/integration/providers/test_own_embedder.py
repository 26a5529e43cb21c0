"""Your own embedding server: an OpenAI-compatible endpoint whose model no table lists."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis as redis_sync
from pydantic import SecretStr

from hindsight_redis import AsyncMemoryClient, EmbeddingMismatch, Settings, Worker
from hindsight_redis.core.keys import Keys
from tests.integration.embedding_server import DIMS, MODEL, EmbeddingServer

PROBE = "dimension probe"


@pytest.fixture
def endpoint() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer().start()
    try:
        yield server
    finally:
        server.shutdown()  # stops serve_forever
        server.server_close()  # closes the listening socket


def _own(settings: Settings, endpoint: EmbeddingServer, **extra: object) -> Settings:
    return settings.model_copy(
        update={
            "embedder": f"litellm:openai/{MODEL}",
            "embedding_api_base": endpoint.url,
            "embedding_api_key": SecretStr("sk-local"),
            "contextual_embedder": "none",
            **extra,
        }
    )


async def test_the_dimension_is_probed_once_recorded_and_reused(
    settings: Settings, endpoint: EmbeddingServer
) -> None:
    own = _own(settings, endpoint)
    async with AsyncMemoryClient(own) as client:
        await client.write("The billing-service-v2 deploy failed with ERR_CONN_RESET")
        await client.write("Alice prefers answers in Chinese and weekly summaries")
        # a worker in its own process, as `hindsight-redis worker` runs beside agents
        proc = subprocess.run(
            [sys.executable, "-m", "hindsight_redis.cli", "worker", "--burst"],
            env={**os.environ, **own.to_env()},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and "Event loop is closed" not in proc.stderr
        with redis_sync.Redis.from_url(own.redis_url or "") as redis:
            meta = redis.hgetall(Keys(own.key_prefix, own.namespace).index_meta)
        assert meta[b"dims"] == str(DIMS).encode()
        assert meta[b"model_id"] == f"litellm:openai/{MODEL}".encode()
        probes = endpoint.texts.count(PROBE)
        assert probes == 1  # the worker probed; the index records the answer
        hits = await client.search("ERR_CONN_RESET", top_k=1)  # in-process, same model
        assert hits and "ERR_CONN_RESET" in hits[0].content
        assert endpoint.texts.count(PROBE) == probes  # taken from the index, not probed again
        assert (await Worker(own).run_async(burst=True)).indexed == 0


async def test_a_given_dimension_that_disagrees_with_the_index_is_refused(
    settings: Settings, endpoint: EmbeddingServer
) -> None:
    async with AsyncMemoryClient(_own(settings, endpoint)) as client:
        await client.search("warm up", top_k=1)  # creates the index (probes: 48)
    wrong = _own(settings, endpoint, embedding_dims=DIMS * 2)
    async with AsyncMemoryClient(wrong) as client:
        with pytest.raises(EmbeddingMismatch, match="96 dims"):
            await client.search("anything", top_k=1)
