"""Layer 3: token counting offline, extractive and LLM summaries."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.language.tokens import count_tokens, ensure_tiktoken_cache
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.stages.summarize import (
    ExtractiveSummarizer,
    LLMSummarizer,
    SummarizeStage,
    split_sentences,
)
from hindsight_redis.providers.llm import LLMClient
from hindsight_redis.settings import Settings

LONG_EN = " ".join(
    [
        "The billing service moved to Postgres 16 on March 3 after two outages.",
        "Alice owns the migration and the rollback plan lives in docs/billing/rollback.md.",
        "We talked about lunch for a while and about the weather, which was nice.",
        "The new connection pool size is 40 per worker, set in BILLING_POOL_SIZE.",
        "Everyone agreed the old MySQL replica will be shut down on April 1.",
    ]
    * 4
)
LONG_ZH = (
    "我们决定在三月三日把账单服务迁移到Postgres 16。"
    "迁移由爱丽丝负责，回滚方案在文档里！"
    "我们还聊了一会儿午饭和天气。"
    "每个工作进程的连接池大小是40？"
    "旧的MySQL副本将在四月一日关闭。"
) * 6


def _candidate(content: str) -> Candidate:
    event = MemoryEvent(event_id="e", namespace="ns", content=content)
    return Candidate(entry_id="1-0", event=event, content=content)


def test_token_counting_works_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    ensure_tiktoken_cache()
    assert os.environ["TIKTOKEN_CACHE_DIR"].endswith("tokenizers")
    assert count_tokens("hello world") == 2
    assert count_tokens(LONG_ZH) > 128


def test_sentences_split_on_chinese_punctuation() -> None:
    assert split_sentences("我喜欢茶。你呢？好！Done. Next") == [
        "我喜欢茶。",
        "你呢？",
        "好！",
        "Done.",
        "Next",
    ]


@pytest.mark.parametrize("text", [LONG_EN, LONG_ZH])
@pytest.mark.asyncio
async def test_extractive_summary_fits_budget_and_keeps_original(text: str) -> None:
    candidate = _candidate(text)
    stage = SummarizeStage(ExtractiveSummarizer(), token_budget=64)
    await stage.process([candidate])
    assert candidate.original == text
    assert candidate.content != text
    assert 0 < count_tokens(candidate.content) <= 64
    assert candidate.notes["summary_source"] == "extractive"
    assert candidate.counters == []


@pytest.mark.asyncio
async def test_extractive_summary_keeps_whole_sentences_of_the_text() -> None:
    summary = ExtractiveSummarizer().summarize_sync(LONG_ZH, 60)
    for sentence in split_sentences(summary):
        assert sentence in LONG_ZH


@pytest.mark.asyncio
async def test_short_text_is_left_alone() -> None:
    candidate = _candidate("The pool size is 40.")
    await SummarizeStage(ExtractiveSummarizer(), token_budget=64).process([candidate])
    assert candidate.content == "The pool size is 40." and candidate.original is None


def _client(mock: object) -> LLMClient:
    settings = Settings(llm_model="gpt-4o-mini", llm_retry_backoff_s=0.0, llm_max_retries=0)
    return LLMClient(settings.llm, mock_response=mock)


@pytest.mark.asyncio
async def test_llm_summary_replaces_content() -> None:
    summary = "Billing moved to Postgres 16 on March 3; pool size 40; MySQL off April 1."
    candidate = _candidate(LONG_EN)
    await SummarizeStage(LLMSummarizer(_client(summary)), token_budget=64).process([candidate])
    assert candidate.content == summary
    assert candidate.original == LONG_EN
    assert candidate.notes["summary_source"] == "llm"


@pytest.mark.asyncio
async def test_llm_summary_failure_falls_back_to_extractive_and_is_counted() -> None:
    candidate = _candidate(LONG_EN)
    stage = SummarizeStage(LLMSummarizer(_client(Exception("down"))), token_budget=64)
    await stage.process([candidate])
    assert candidate.counters == ["fallback:summarizer"]
    assert candidate.notes["summary_source"] == "extractive"
    assert count_tokens(candidate.content) <= 64


@pytest.mark.asyncio
async def test_overlong_llm_summary_is_cut_to_budget() -> None:
    candidate = _candidate(LONG_EN)
    stage = SummarizeStage(LLMSummarizer(_client(LONG_EN)), token_budget=32)
    await stage.process([candidate])
    assert count_tokens(candidate.content) <= 32
