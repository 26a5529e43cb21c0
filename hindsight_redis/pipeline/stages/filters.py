"""The three filter layers, assembled from ``FilterSettings``.

Order: rules, then score, then summarize.

- Rules first: they are free and remove most of the noise before anything
  costs a model call.
- Score before summarize: the score judges what the writer actually said.
  A summary is lossy, and an LLM summary is itself model output that an
  injected text could have steered; scoring the original keeps the judge
  looking at the evidence. It also means texts that will be dropped are
  never summarized, and summarizing is the expensive step (a long input and
  a generated output, where scoring generates a few tokens). The scorer cuts
  very long inputs itself, so scoring the original stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindsight_redis.pipeline.stages.filter_config import load_filter_config
from hindsight_redis.pipeline.stages.rules import RuleFilter
from hindsight_redis.pipeline.stages.scoring import HeuristicScorer, LLMScorer, Scorer, ScoreStage
from hindsight_redis.pipeline.stages.summarize import (
    ExtractiveSummarizer,
    LLMSummarizer,
    Summarizer,
    SummarizeStage,
)
from hindsight_redis.providers.llm import LLMClient

if TYPE_CHECKING:
    from hindsight_redis.pipeline.stages.base import Stage
    from hindsight_redis.providers.spend import SpendLedger
    from hindsight_redis.settings import FilterSettings, LLMSettings


def build_filter_stages(
    filters: FilterSettings,
    llm_settings: LLMSettings,
    *,
    llm: LLMClient | None = None,
    ledger: SpendLedger | None = None,
) -> list[Stage]:
    """The filter stages of ``filters``: ``[rules, score, summarize]``.

    Empty when ``filters.filters_enabled`` is False. The scorer and the summarizer
    each use a model when ``llm_settings`` names one for them (``score_model``,
    ``summary_model``, else ``llm_model``; their calls counted in ``ledger``) or an
    ``llm`` client is given (e.g. one with ``mock_response`` in tests, calling the
    stage's own model when one is set), else their offline heuristics.
    """
    if not filters.filters_enabled:
        return []
    score_model, summary_model = llm_settings.model_of("score"), llm_settings.model_of("summary")
    given = llm is not None
    if llm is None and (score_model or summary_model):
        # One client, one concurrency limit, for both stages' models.
        llm = LLMClient(llm_settings, model=score_model or summary_model, ledger=ledger)
    scorer: Scorer = HeuristicScorer()
    summarizer: Summarizer = ExtractiveSummarizer()
    if llm is not None and (given or score_model):
        scorer = LLMScorer(
            llm.for_model(score_model),
            max_gap=filters.llm_score_max_gap,
            cache_entries=llm_settings.llm_cache_entries,
        )
    if llm is not None and (given or summary_model):
        summarizer = LLMSummarizer(llm.for_model(summary_model))
    return [
        RuleFilter(load_filter_config(filters.filter_config)),
        ScoreStage(
            scorer,
            min_score=filters.min_score,
            importance_max_nudge=filters.importance_max_nudge,
        ),
        SummarizeStage(summarizer, token_budget=filters.summary_token_budget),
    ]
