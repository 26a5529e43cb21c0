"""``evaluate``: the clients' method that measures search on the user's own data.

Defined here, not in ``async_client``, and set on ``AsyncMemoryClient`` as one of its
methods; the work is ``ops.evaluate`` (a golden file) and ``ops.selfcheck`` (the pool's
own memories).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import SearchHit, SearchMode
from hindsight_redis.errors import InvalidArgument
from hindsight_redis.ops.evaluate import (
    EvalReport,
    GoldenQuestion,
    Progress,
    golden_questions,
    read_golden,
    run_golden,
)
from hindsight_redis.ops.selfcheck import run_self
from hindsight_redis.providers.llm import LLMClient
from hindsight_redis.settings import Settings

Golden = str | Path | Iterable[Mapping[str, Any] | GoldenQuestion]


class Evaluated(Protocol):
    """What ``evaluate`` needs of the client."""

    settings: Settings
    keys: Keys

    async def connect(self) -> Redis:
        """The connection, opened on first use."""
        ...

    def caller(self, as_agent: str | None = None) -> str:
        """Who a call acts as."""
        ...

    @property
    def search(self) -> Callable[..., Awaitable[list[SearchHit]]]:
        """The public search (its options: ``SearchOptions``)."""
        ...


async def evaluate(
    self: Evaluated,
    golden: Golden | None = None,
    *,
    sample: int | None = None,
    k: int = 10,
    mode: SearchMode = "hybrid",
    as_agent: str | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Measure search on your own data: recall@k, hit@k, MRR and nDCG@k.

    ``golden`` is a golden file's path (JSON Lines, one question a line: ``query``,
    ``relevant`` memory ids and/or ``relevant_sources``, optional ``filters`` (search
    options), ``as_agent`` and ``tags`` that group the report), or the same questions as
    dicts. Each is searched with ``top_k=k`` and ``mode``; the report has the metrics
    overall and per tag, the questions that found nothing relevant and search p50 / p99.

    ``sample=N`` instead samples N active memories the caller (``as_agent``) may see and
    searches for each with a query made from it (its rarest words, or the question the
    configured LLM writes): self-hit@k and MRR, a health check that needs no labels.
    ``seed`` fixes the sample. Bad files and arguments raise ``InvalidArgument``.
    """
    if (golden is None) == (sample is None):
        raise InvalidArgument("evaluate takes a golden file (or questions) or sample=N, not both")
    if golden is not None:
        questions = (
            read_golden(golden) if isinstance(golden, str | Path) else golden_questions(golden)
        )
        return await run_golden(
            self.search, questions, k=k, mode=mode, as_agent=as_agent, progress=progress
        )
    assert sample is not None
    llm = LLMClient(self.settings.llm) if self.settings.llm.llm_model else None
    return await run_self(
        await self.connect(),
        self.keys,
        self.search,
        sample,
        viewer=self.caller(as_agent),
        k=k,
        mode=mode,
        llm=llm,
        seed=seed,
        progress=progress,
    )
