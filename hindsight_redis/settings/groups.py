"""The groups of settings: the fields each concern reads, with defaults, bounds and descriptions.

``Settings`` (``hindsight_redis.settings``) is all of them, flat; each component takes its
group (``settings.search``...). The README's configuration table shows them in this order.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from hindsight_redis.errors import ConfigError

Profile = Literal["ephemeral", "snapshot", "balanced", "durable"]


def default_server_dir() -> Path:
    """Where the embedded server keeps its data, pid and log files."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hindsight-redis"


REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")


def redis_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as a Redis URL (its scheme, its host), or None."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in REDIS_SCHEMES or not rest.strip("/"):
        # Never a password: "user:secret@host" without a scheme is a likely mistake.
        shown = f"***@{url.rpartition('@')[2]}" if "@" in url else url
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return (
            f"{shown!r} is not a Redis URL: use redis://host:port/db "
            "(or rediss://, unix:///path, redis+cluster://)"
        )
    return None


def described(error: ValidationError) -> ConfigError:
    """One ``ConfigError`` naming each bad setting, its variable (``HINDSIGHT_<NAME>``) and
    what is wrong with it."""
    problems = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem["loc"]) or "settings"
        message = problem["msg"].removeprefix("Value error, ")
        problems.append(f"{name} (HINDSIGHT_{name.upper()}): {message}")
    return ConfigError("invalid settings: " + "; ".join(problems))


class _Group(BaseModel):
    """A group of settings: the fields one concern reads (a view of ``Settings``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    def __init__(self, **values: Any) -> None:
        """Validated settings; invalid ones are one ``ConfigError`` (a ``HindsightError``
        and a ``ValueError``) naming each, never pydantic's own error."""
        try:
            super().__init__(**values)
        except ValidationError as e:
            raise described(e) from None


class IdentitySettings(_Group):
    """Which memory pool, under which keys, and who this process acts as."""

    namespace: str = Field("default", description="The shared memory pool to use.")
    key_prefix: str = Field("hindsight", description="Prefix of every Redis key.")
    agent_id: str = Field(
        "",
        max_length=256,
        description="Who this client acts as: writes record it, searches see its private memories.",
    )

    @field_validator("namespace", "key_prefix")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        if not value or len(value) > 64 or not set(value) <= allowed:
            raise ValueError("must be 1-64 characters of letters, digits, '-', '_' or '.'")
        return value


class ConnectionSettings(_Group):
    """How to reach Redis: the URL (unset: the embedded server), its password, the
    persistence profile, and whether it is a cluster."""

    redis_url: str | None = Field(None, description="Redis URL; unset means the embedded server.")
    redis_password: SecretStr | None = Field(
        None,
        description="Password of every connection (a password in redis_url wins); the "
        "embedded server requires it (requirepass).",
    )
    profile: Profile = Field("balanced", description="Persistence profile.")
    cluster: bool = Field(
        False, description="redis_url names a Redis Cluster node (as redis+cluster:// does)."
    )
    read_from_replicas: bool = Field(
        False, description="Cluster: searches and other reads may be served by replicas."
    )
    cluster_retry_s: float = Field(
        15.0, gt=0, description="Cluster: longest a call waits out a failover or slot move."
    )

    @field_validator("redis_url")
    @classmethod
    def _a_redis_url(cls, value: str | None) -> str | None:
        problem = None if value is None else redis_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("redis_password", mode="before")
    @classmethod
    def _no_empty_password(cls, value: object) -> object:
        # HINDSIGHT_REDIS_PASSWORD= (set, empty) means no password, not the empty one.
        return None if value == "" else value

    @property
    def embedded(self) -> bool:
        """True when no Redis URL is configured and the embedded server is used."""
        return self.redis_url is None


class ServerSettings(_Group):
    """The embedded server: where it keeps its data, where it listens."""

    server_dir: Path = Field(default_factory=default_server_dir)
    server_port: int = Field(6479, ge=0, le=65535, description="0 picks a free port.")
    server_bind: str = "127.0.0.1"
    server_start_timeout_s: float = Field(15.0, gt=0)


class WriteSettings(_Group):
    """The write path: limits of a write, backpressure, waiting for the outcome."""

    max_content_chars: int = Field(32_000, gt=0)
    max_tags: int = Field(32, gt=0)
    max_backlog: int = Field(100_000, gt=0)
    backpressure: Literal["error", "block"] = "error"
    backpressure_timeout_s: float = Field(10.0, ge=0)
    write_wait_timeout_s: float = Field(30.0, gt=0)
    idempotency_ttl_s: int = Field(7 * 86_400, gt=0)
    waitaof_timeout_ms: int = Field(1_000, ge=0)


class WorkerSettings(_Group):
    """The workers: batches, reclaiming, retries, what the stream keeps, the refiner."""

    worker_batch_size: int = Field(
        256,
        gt=0,
        description="Entries per worker batch at most (fewer when fewer wait); 2 workers "
        "drained 20,000 writes ~10% faster than with 128 (docs/decisions.md).",
    )
    worker_block_ms: int = Field(500, ge=0)
    claim_idle_ms: int = Field(30_000, gt=0)
    namespace_refresh_s: float = Field(
        2.0, gt=0, description="How often a worker serving every namespace looks for new ones."
    )
    max_deliveries: int = Field(5, gt=0)
    outcome_ttl_s: int = Field(7 * 86_400, gt=0)
    stream_keep_acked: int = Field(
        0,
        ge=0,
        description="Acknowledged stream entries are trimmed once the stream holds more than "
        "this many (0: after every batch); more keeps them for replay by other consumer "
        "groups, and keeps the content of written memories in the stream that long.",
    )
    refine_batch_size: int = Field(
        8,
        gt=0,
        description="Memories per refine step (writes arriving meanwhile wait for it: "
        "about 10 ms a memory on one core).",
    )
    refine_share: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="Share of a worker's time given to refining while writes wait for it "
        "(a worker that keeps up refines between batches anyway; 0: only then).",
    )
    worker_role: Literal["all", "ingest", "refine"] = Field(
        "all",
        description='"all": ingest and refine; "ingest": never refine; "refine": only add '
        "contextual vectors (refiners in processes or on machines of their own).",
    )


class FilterSettings(_Group):
    """The three filter layers: rules, the write score, summaries."""

    filters_enabled: bool = True
    filter_config: Path | None = Field(
        None, description="Extra filter lists (TOML) merged over the built-in ones."
    )
    min_score: float = Field(0.6, ge=0.0, le=1.0)
    summary_token_budget: int = Field(128, gt=0)
    importance_max_nudge: float = Field(
        0.1, ge=0.0, le=0.5, description="Most the writer's importance hint moves a score."
    )
    llm_score_max_gap: float = Field(
        0.15, ge=0.0, le=1.0, description="Most an LLM score may sit from the heuristic's."
    )


class DedupSettings(_Group):
    """Near-duplicates merged, contradictions flagged."""

    dedup_threshold: float = Field(0.95, ge=0.0, le=1.0)
    conflict_threshold: float = Field(
        0.3, ge=0.0, le=1.0, description="Cosine over which the nearest memories are judged."
    )


class LLMSettings(_Group):
    """The LLM of the scorer, the summarizer and the judges (through litellm), a cheaper
    one per stage if wanted, and the daily budget of each namespace."""

    llm_model: str | None = None
    llm_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_s: float = Field(10.0, gt=0)
    llm_max_retries: int = Field(2, ge=0)
    llm_concurrency: int = Field(8, gt=0)
    llm_retry_backoff_s: float = Field(0.5, ge=0.0, description="First retry delay; doubles.")
    llm_cache_entries: int = Field(4096, ge=0, description="Scores cached by content hash.")
    llm_daily_tokens: int = Field(
        0, ge=0, description="LLM tokens a namespace may spend per UTC day; 0: unlimited."
    )
    llm_daily_usd: float = Field(
        0.0, ge=0.0, description="LLM dollars a namespace may spend per UTC day; 0: unlimited."
    )
    score_model: str | None = Field(None, description="Model of the write score; unset: llm_model.")
    summary_model: str | None = Field(None, description="Model of the summaries; unset: llm_model.")
    judge_model: str | None = Field(
        None, description="Model of the conflict and poisoning judges; unset: llm_model."
    )

    def model_of(self, stage: Literal["score", "summary", "judge"]) -> str | None:
        """The model ``stage`` calls: its own (``score_model``...), else ``llm_model``."""
        own: str | None = getattr(self, f"{stage}_model")
        return own or self.llm_model


class EmbeddingSettings(_Group):
    """The static embedder of the write path and the contextual one of the refiner."""

    embedder: str = Field("local", description='"local", "hash" or "litellm:<model>".')
    embedding_api_base: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_batch_size: int = Field(256, gt=0)
    embedding_dims: int | None = Field(
        None, gt=0, description="Vector size of a litellm embedder; unset: probed once."
    )
    contextual_embedder: str = Field(
        "minilm",
        description='Second vector added in the background: "minilm", "none" or any embedder name.',
    )
    contextual_threads: int = Field(1, gt=0, le=64, description="onnxruntime threads per process.")
    contextual_query_int8: bool = Field(
        True,
        description="Embed search queries with the contextual model's int8 graph "
        "(about 3x faster, cosine 0.995 to the full graph).",
    )
    contextual_drafts: bool = Field(
        True,
        description="A new memory first gets a draft contextual vector from the int8 graph "
        "(about 3x faster, cosine 0.99), replaced by the full graph's once no memory waits "
        "for a first one; false: the full graph's at once.",
    )
    contextual_stored_dims: int = Field(
        256,
        ge=0,
        description="Dimensions a new index stores of each MiniLM contextual vector (a PCA "
        "basis shipped with the package; 0 or 384: whole). Other contextual models store "
        "theirs whole; an existing index keeps what its record names.",
    )


class IndexSettings(_Group):
    """How a new index stores its vectors and builds its graphs; the search module's GC."""

    vector_datatype: Literal["float16", "float32"] = Field(
        "float16",
        description="How a new index stores its vectors (half the bytes of float32, same "
        "recall on LoCoMo); an existing index keeps its own, reindex moves the static one.",
    )
    hnsw_m: int = Field(16, gt=0, description="HNSW graph degree of the static vector field.")
    context_hnsw_m: int = Field(
        8, gt=0, description="HNSW graph degree of the contextual vector field."
    )
    hnsw_ef_construction: int = Field(100, gt=0)
    search_gc_tune: bool = Field(
        True, description="Make the search module's GC run every 2 s at connect time."
    )


class SearchSettings(_Group):
    """Hybrid search: the legs' depth, fusion, floors, time signals, the keyword budget."""

    hnsw_ef_runtime: int = Field(64, gt=0)
    hybrid_alpha: float = Field(
        0.35, ge=0.0, le=1.0, description="Weight of the scaled vector score in linear fusion."
    )
    hybrid_contextual_weight: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Weight of the contextual cosine in hybrid search; the rest is split by alpha.",
    )
    chinese_rerank_weight: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="Weight of the multilingual model's cosine when it re-ranks the first "
        "candidates of a Chinese search (providers.multilingual); 0: off.",
    )
    hybrid_cross_language: bool = Field(
        True, description="Rank memories in another script than the query by their vector too."
    )
    hybrid_fusion: Literal["linear", "rrf"] = Field(
        "linear", description="Hybrid fusion: linear blend or reciprocal rank fusion."
    )
    search_min_vector: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="Static cosine a hit needs unless another leg vouches; unset: the model's.",
    )
    search_min_contextual: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="Contextual cosine that vouches for a hit; unset: the model's.",
    )
    search_candidates: int = Field(
        30, gt=0, le=1000, description="Candidates per search leg (at least 4 x top_k)."
    )
    search_date_weight: float = Field(
        0.2, ge=0.0, le=1.0, description="Gain of hits that happened when the query says (0: off)."
    )
    search_date_slack_days: float = Field(
        7.0, ge=0.0, le=3650.0, description="How far outside the query's dates a hit still gains."
    )
    search_time_answer_weight: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description='Gain of hits telling a time, for "when" questions (0: off).',
    )
    keyword_common_share: float = Field(
        0.02,
        gt=0.0,
        le=1.0,
        description="Keyword budget: the rarest query terms select documents while their "
        "counts add up to this share of the memories; the others only score (1: off).",
    )
    keyword_common_min_docs: int = Field(
        2000, ge=0, description="...and to at least this many memories."
    )


class RetentionSettings(_Group):
    """The retention score: its weights and half-lives."""

    retention_access_weight: float = Field(
        allow_inf_nan=False, default=0.4, ge=0.0, description="Weight of access frequency."
    )
    retention_recency_weight: float = Field(
        allow_inf_nan=False, default=0.3, ge=0.0, description="Weight of time decay."
    )
    retention_write_score_weight: float = Field(
        allow_inf_nan=False, default=0.2, ge=0.0, description="Weight of write score."
    )
    retention_protected_weight: float = Field(
        allow_inf_nan=False, default=0.1, ge=0.0, description="Weight of protection."
    )
    retention_access_saturation: int = Field(
        100, ge=1, description="Reads at which access frequency is full (log scale)."
    )
    half_life_days: float = Field(
        90.0,
        gt=0,
        allow_inf_nan=False,
        description="Days for time decay to halve, unless the memory or task says.",
    )
    task_half_life_days: dict[str, float] = Field(
        default_factory=lambda: {"preference": 365.0, "dialogue": 30.0},
        description="Half-life in days per task_type (a table in TOML, JSON in the environment).",
    )

    @field_validator("task_half_life_days")
    @classmethod
    def _positive_half_lives(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [name for name, days in value.items() if not (math.isfinite(days) and days > 0)]
        if bad:
            raise ValueError(f"half-lives must be > 0 days (not for {', '.join(sorted(bad))})")
        return value

    @model_validator(mode="after")
    def _retention_weights_can_score(self) -> RetentionSettings:
        weights = (
            self.retention_access_weight,
            self.retention_recency_weight,
            self.retention_write_score_weight,
            self.retention_protected_weight,
        )
        if sum(weights) <= 0:
            raise ValueError("retention weights must be >= 0 with a positive sum")
        return self


class SweepSettings(_Group):
    """Retention sweeps: what they archive, how fast, how often."""

    sweep_threshold: float | None = Field(
        0.25, ge=0.0, le=1.0, description="Sweeps archive active memories scoring below this."
    )
    sweep_max_active: int | None = Field(
        None, gt=0, description="Sweeps archive the lowest beyond this many active memories."
    )
    sweep_batch: int = Field(1000, gt=0, le=100_000, description="Memories per sweep step.")
    sweep_interval_s: float = Field(
        0.0, ge=0.0, description="Workers sweep this often (0: never; one sweeper at a time)."
    )
    sweep_redis_share: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="Most of Redis's time a sweep takes (it pauses between calls); 1: no pause.",
    )
    sweep_lease_s: float = Field(
        30.0, gt=0, description="How long a sweeper holds its lease without renewing it."
    )


class TrustSettings(_Group):
    """What may be stored and who is trusted: secrets, poisoning, provenance, the audit trail."""

    secrets: Literal["mask", "drop", "hold", "keep"] = Field(
        "mask",
        description="A write holding a secret or personal data: mask it (a placeholder, the "
        "secret never stored), drop the write, hold it for review, or keep it as written.",
    )
    poisoning: Literal["hold", "drop", "keep"] = Field(
        "hold",
        description="A write that instructs future readers instead of recording a fact: hold "
        "it for review, drop it, or keep it.",
    )
    trusted_only: bool = Field(
        False,
        description="Searches find only memories of identified writers or reviewed ones.",
    )
    audit_retention_days: float = Field(
        365.0, gt=0, allow_inf_nan=False, description="Days the audit trail keeps an entry."
    )
