"""A provider without credentials fails at once, in one line: no retries, no banners."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from hindsight_redis import EmbeddingError, MemoryClient, ProviderError, Settings, Worker
from hindsight_redis.providers.litellm_embedder import LiteLLMEmbedder
from hindsight_redis.providers.litellm_import import load_litellm
from hindsight_redis.providers.llm import LLMClient

EMBEDDER = "litellm:text-embedding-3-small"
_NO_KEYS = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


async def test_an_embedder_without_a_key_fails_once_through_litellm(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # A key litellm rejects is its answer, not ours: the rule must hold for its errors too.
    embedder = LiteLLMEmbedder(
        "text-embedding-3-small", dims=8, max_retries=3, api_key="", api_base="http://127.0.0.1:9"
    )
    load_litellm()  # its import (a second or more) is not the failure's time
    started = time.perf_counter()
    with pytest.raises(EmbeddingError, match="not retryable") as failed:
        await embedder.embed(["the deploy window is Tuesday"])
    assert time.perf_counter() - started < 2.0  # three retries with backoff take ~9 s
    assert failed.value.retryable is False
    printed = capsys.readouterr()
    assert "Give Feedback" not in printed.out + printed.err


def test_reindex_without_credentials_is_one_line(settings: Settings) -> None:
    with MemoryClient(settings) as client:
        client.write("the deploy window is Tuesday")
    Worker(settings).run(burst=True)  # an indexed memory: the reindex has one to embed
    env = {**_NO_KEYS, **settings.to_env()}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", "reindex", "--embedder", EMBEDDER],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    elapsed = time.perf_counter() - started
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) <= 3 and "Traceback" not in done.stderr, done.stderr
    assert "credentials" in done.stderr.lower() or "api_key" in done.stderr.lower()
    assert "Give Feedback" not in done.stdout + done.stderr
    assert elapsed < 2.0 + _startup_s(env), elapsed


def _startup_s(env: dict[str, str]) -> float:
    """What starting the CLI costs on this host (the limit is on the failure, not on it)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hindsight_redis.cli", "--version"], env=env, check=True)
    return time.perf_counter() - started


async def test_an_llm_without_a_key_is_told_which_variable_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = LLMClient(Settings(llm_model="gpt-4o-mini", llm_max_retries=3).llm)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY or HINDSIGHT_LLM_API_KEY") as failed:
        await llm.complete_text("judge", "the deploy window is Tuesday")
    assert failed.value.retryable is False
