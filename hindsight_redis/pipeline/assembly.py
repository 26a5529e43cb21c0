"""Builds the default stage list of a worker from its settings' groups.

Order: the trust checks (the secrets a writer put on the stream past the client:
masked, dropped or held, ``stages.secrets``; then writes held for review,
``stages.poisoning``), the filter layers (rules, score, summarize), then embed, then
dedup and conflict checks against what is stored. The trust checks run even where the
filters are off, and before a worker's own ``stages`` when it is given some. The
index is created (or checked against the embedder) before the first entry is
read. What needs no
namespace (the embedders, the filter stages, the conflict judge: models that
take memory and time to load) is built once, in ``SharedParts``, and shared by
every namespace a worker serves; the rest is built per namespace from
``PipelineSettings``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.pipeline.refine import Refiner
from hindsight_redis.pipeline.stages.base import Stage
from hindsight_redis.providers.embedders import (
    contextual_from_settings,
    draft_from_settings,
    embedder_from_settings,
)
from hindsight_redis.providers.multilingual import shared_model
from hindsight_redis.providers.spend import SpendBudget, SpendLedger
from hindsight_redis.providers.vectors import Embedder
from hindsight_redis.settings import (
    DedupSettings,
    EmbeddingSettings,
    FilterSettings,
    IndexSettings,
    LLMSettings,
    SearchSettings,
    TrustSettings,
    WorkerSettings,
)

if TYPE_CHECKING:
    from hindsight_redis.pipeline.stages.dedup import ConflictJudge

log = logging.getLogger(__name__)


@dataclass(slots=True)
class BuiltPipeline:
    """The stages a worker runs and what its commits need to know.

    ``stages`` starts with ``SharedParts.stages`` (the namespace-independent
    ones); ``own_stages`` are the rest, which need the namespace's index.
    """

    stages: list[Stage]
    vector_field: str
    vector_datatype: str
    generation: int
    contextual: bool = False
    maintenance: Callable[[], Awaitable[object]] | None = None
    ensure_index: Callable[[], Awaitable[object]] | None = None
    refiner: Refiner | None = None
    own_stages: list[Stage] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SharedParts:
    """The parts of a pipeline that do not depend on the namespace, built once per worker.

    ``stages`` (the trust checks, the filters, then embed) can run over
    candidates of many namespaces at once; ``guard`` are the trust checks alone,
    which also run before a worker's own stages.
    """

    embedder: Embedder
    contextual: Embedder | None
    stages: list[Stage]
    judge: ConflictJudge
    guard: list[Stage] = field(default_factory=list)
    draft: Embedder | None = None
    """The contextual model's faster form for first vectors (``contextual_drafts``)."""
    ledger: SpendLedger | None = None
    """Counts the stages' LLM calls: attached to Redis by the first ``build_pipeline``."""

    def warm(self) -> None:
        """Load now (blocking) what the first batch would: a local embedder's model (~0.4 s
        of CPU), the token counter's encoding (~0.15 s: the summarizer and the fact
        comparison count tokens) and the poisoning scan's literal tests (~0.25 s). A worker
        does it before reading, so its first writes do not wait for them (nor does a profile
        of its stages count them per write).

        A part that fails to load is left to its first use, which fails as it did before
        (logged here): loading early never stops a worker that loading late would not."""
        from hindsight_redis.language.tokens import encoding
        from hindsight_redis.trust.poisoning import warm as poisoning_tests

        warm = getattr(self.embedder, "warm", None)
        for load in (warm if callable(warm) else None, encoding, poisoning_tests):
            if load is None:
                continue
            try:
                load()
            except Exception as e:  # e.g. tiktoken offline without litellm's bundled file
                log.warning("could not load %s ahead of the first batch: %s", load, e)


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """The groups a namespace's own part of the pipeline is built from: its index
    (``MemoryIndex`` reads ``index``, ``search`` and ``embedding``), the dedup
    thresholds, the worker's (the refiner's batch; the consumer reads the rest), and
    ``trust`` (how long the audit trail keeps the writes committed)."""

    worker: WorkerSettings
    dedup: DedupSettings
    index: IndexSettings
    search: SearchSettings
    embedding: EmbeddingSettings
    trust: TrustSettings = field(default_factory=TrustSettings)


def shared_parts(
    embedding: EmbeddingSettings,
    filters: FilterSettings,
    llm: LLMSettings,
    trust: TrustSettings | None = None,
) -> SharedParts:
    """The embedders of ``embedding``, the trust checks of ``trust`` (default: its
    defaults; secrets then poisoning, filters or not), the filter stages of ``filters``
    (scored and summarized by ``llm`` when it names a model, which also judges
    poisoning), the embed stage and the conflict judge; their LLM calls counted and
    held to each namespace's daily budget by one ``SpendLedger``.

    Models load lazily, on first use.
    """
    from hindsight_redis.pipeline.stages.dedup import judge_from_settings
    from hindsight_redis.pipeline.stages.embed import EmbedStage
    from hindsight_redis.pipeline.stages.filters import build_filter_stages
    from hindsight_redis.pipeline.stages.poisoning import PoisoningStage
    from hindsight_redis.pipeline.stages.secrets import secret_stages
    from hindsight_redis.trust.poisoning import poison_judge_from_settings

    trust = trust or TrustSettings()
    embedder = embedder_from_settings(embedding)
    ledger = SpendLedger(SpendBudget.of(llm))
    guard: list[Stage] = [
        *secret_stages(trust),
        PoisoningStage(poison_judge_from_settings(llm, ledger=ledger), policy=trust.poisoning),
    ]
    return SharedParts(
        embedder=embedder,
        contextual=contextual_from_settings(embedding),
        draft=draft_from_settings(embedding),
        stages=[*guard, *build_filter_stages(filters, llm, ledger=ledger), EmbedStage(embedder)],
        judge=judge_from_settings(llm, ledger=ledger),
        guard=guard,
        ledger=ledger,
    )


async def build_pipeline(
    redis: aioredis.Redis, keys: Keys, settings: PipelineSettings, shared: SharedParts
) -> BuiltPipeline:
    """The stages of ``keys.namespace``: ``shared``'s, then its own (dedup), with its
    index ensured for their embedders (as ``settings`` lays a new one out).
    """
    from hindsight_redis.index.manager import MemoryIndex
    from hindsight_redis.lifecycle.access import flush_access_log
    from hindsight_redis.pipeline.stages.dedup import DedupStage

    embedder, contextual = shared.embedder, shared.contextual
    if shared.ledger is not None:  # every namespace of a worker shares its connection
        shared.ledger.attach(redis, keys.prefix)
    index = MemoryIndex(redis, keys, settings.index, settings.search, settings.embedding)
    info = await index.ensure(embedder, contextual)
    refiner = None
    if contextual is not None and info.context_model == contextual.model_id:
        refiner = Refiner(
            redis,
            keys,
            contextual,
            batch_size=settings.worker.refine_batch_size,
            info=info,
            draft=shared.draft,
            multilingual=shared_model() if settings.search.chinese_rerank_weight > 0 else None,
        )
    own: list[Stage] = [DedupStage(redis, keys, settings.dedup, info, judge=shared.judge)]

    async def maintenance() -> object:
        """Periodic upkeep: finish an upgrade of the data left running (an index being
        rebuilt), fold batched access counts into the memories."""
        await index.finish_upgrade()
        return await flush_access_log(redis, keys)

    return BuiltPipeline(
        stages=[*shared.stages, *own],
        own_stages=own,
        vector_field=info.vector_field,
        vector_datatype=info.datatype,
        generation=info.generation,
        contextual=info.has_context,
        maintenance=maintenance,
        ensure_index=lambda: index.ensure(embedder, contextual),
        refiner=refiner,
    )
