"""One settings object for the whole project, in groups.

Values are read, lowest priority first, from the defaults below, then the TOML
file named by ``HINDSIGHT_CONFIG`` (or ``config/default.toml`` in the working
directory when it exists), then ``HINDSIGHT_*`` environment variables, then
keyword arguments. Nothing is read at import time: build a ``Settings()`` and
pass it in.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

Profile = Literal["ephemeral", "snapshot", "balanced", "durable"]
_DEFAULT_CONFIG = Path("config") / "default.toml"


def config_file() -> Path | None:
    """The TOML file settings are read from, or None when there is none."""
    named = os.environ.get("HINDSIGHT_CONFIG")
    if named:
        return Path(named)
    return _DEFAULT_CONFIG if _DEFAULT_CONFIG.is_file() else None


def default_server_dir() -> Path:
    """Where the embedded server keeps its data, pid and log files."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hindsight-redis"


class _Group(BaseModel):
    """A group of settings: the fields one concern reads (a view of ``Settings``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


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
    stream_keep_acked: int = Field(10_000, ge=0)
    refine_batch_size: int = Field(16, gt=0, description="Memories per background refine step.")


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
    """The LLM of the scorer, the summarizer and the conflict judge (through litellm)."""

    llm_model: str | None = None
    llm_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_s: float = Field(10.0, gt=0)
    llm_max_retries: int = Field(2, ge=0)
    llm_concurrency: int = Field(8, gt=0)
    llm_retry_backoff_s: float = Field(0.5, ge=0.0, description="First retry delay; doubles.")
    llm_cache_entries: int = Field(4096, ge=0, description="Scores cached by content hash.")


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
        description="Embed search queries with the contextual model's int8 query graph "
        "(about 3x faster, cosine 0.995 to the full graph); documents use the full graph.",
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


class Settings(  # groups last to first: pydantic lists the fields of the last base first
    SweepSettings,
    RetentionSettings,
    SearchSettings,
    IndexSettings,
    EmbeddingSettings,
    LLMSettings,
    DedupSettings,
    FilterSettings,
    WorkerSettings,
    WriteSettings,
    ServerSettings,
    ConnectionSettings,
    IdentitySettings,
    BaseSettings,
):
    """Every tunable of hindsight-redis; see the README's configuration table.

    Flat, as the environment (``HINDSIGHT_<NAME>``) and the TOML file name
    them; each group is also a view (``settings.search``, ``settings.worker``...),
    and components take their group, not the whole object.
    """

    model_config = SettingsConfigDict(
        env_prefix="HINDSIGHT_", extra="forbid", validate_default=True, frozen=True
    )

    @property
    def identity(self) -> IdentitySettings:
        """The ``IdentitySettings`` of these settings."""
        return _view(IdentitySettings, self)

    @property
    def connection(self) -> ConnectionSettings:
        """The ``ConnectionSettings`` of these settings."""
        return _view(ConnectionSettings, self)

    @property
    def server(self) -> ServerSettings:
        """The ``ServerSettings`` of these settings."""
        return _view(ServerSettings, self)

    @property
    def write(self) -> WriteSettings:
        """The ``WriteSettings`` of these settings."""
        return _view(WriteSettings, self)

    @property
    def worker(self) -> WorkerSettings:
        """The ``WorkerSettings`` of these settings."""
        return _view(WorkerSettings, self)

    @property
    def filters(self) -> FilterSettings:
        """The ``FilterSettings`` of these settings."""
        return _view(FilterSettings, self)

    @property
    def dedup(self) -> DedupSettings:
        """The ``DedupSettings`` of these settings."""
        return _view(DedupSettings, self)

    @property
    def llm(self) -> LLMSettings:
        """The ``LLMSettings`` of these settings."""
        return _view(LLMSettings, self)

    @property
    def embedding(self) -> EmbeddingSettings:
        """The ``EmbeddingSettings`` of these settings."""
        return _view(EmbeddingSettings, self)

    @property
    def index(self) -> IndexSettings:
        """The ``IndexSettings`` of these settings."""
        return _view(IndexSettings, self)

    @property
    def search(self) -> SearchSettings:
        """The ``SearchSettings`` of these settings."""
        return _view(SearchSettings, self)

    @property
    def retention(self) -> RetentionSettings:
        """The ``RetentionSettings`` of these settings."""
        return _view(RetentionSettings, self)

    @property
    def sweeps(self) -> SweepSettings:
        """The ``SweepSettings`` of these settings."""
        return _view(SweepSettings, self)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields as ``repr`` shows them: a password in ``redis_url`` masked."""
        for name, value in super().__repr_args__():
            if name == "redis_url" and isinstance(value, str):
                value = redact_url(value)
            yield name, value

    def to_env(self) -> dict[str, str]:
        """``HINDSIGHT_*`` variables that rebuild these settings in another process.

        Every field set explicitly or from a source is included (secrets in
        clear: pass the result only to processes you start yourself).
        """
        env: dict[str, str] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, dict | list):
                value = json.dumps(value)  # what pydantic-settings parses back
            env[f"HINDSIGHT_{name.upper()}"] = str(value)
        return env

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then environment, then the TOML file, then defaults."""
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = config_file()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)


G = TypeVar("G", bound=_Group)


def _view(group: type[G], settings: Settings) -> G:
    """The fields of ``group`` read off ``settings`` (validated already); its
    ``model_fields_set`` is theirs (what was set explicitly, e.g. the profile)."""
    values = {name: getattr(settings, name) for name in group.model_fields}
    explicit = settings.model_fields_set & group.model_fields.keys()
    return cast(G, group.model_construct(_fields_set=explicit, **values))


GROUPS: tuple[type[_Group], ...] = (
    IdentitySettings,
    ConnectionSettings,
    ServerSettings,
    WriteSettings,
    WorkerSettings,
    FilterSettings,
    DedupSettings,
    LLMSettings,
    EmbeddingSettings,
    IndexSettings,
    SearchSettings,
    RetentionSettings,
    SweepSettings,
)
"""The groups, in the order the README's configuration table shows them."""


def is_loopback(host: str) -> bool:
    """Whether an address (or ``localhost``) reaches this machine only; False for names."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "*", "0.0.0.0"-like wildcards are addresses; host names are not


def redact_url(url: str) -> str:
    """``url`` with the credentials of its authority (``user:password@``) masked."""
    scheme, sep, rest = url.partition("://")
    # Up to the query: a password may hold '/' (unencoded), a query value '@'.
    main = re.split(r"[?#]", rest, maxsplit=1)[0]
    if not sep or "@" not in main:
        return url
    return f"{scheme}://***@{rest[main.rindex('@') + 1 :]}"


def load_settings(**overrides: Any) -> Settings:
    """``Settings(**overrides)``, with invalid values reported as one ``ConfigError``.

    The message names each bad setting, its source-independent name
    (``HINDSIGHT_<NAME>``) and what is wrong with it.
    """
    from hindsight_redis.errors import ConfigError

    try:
        return Settings(**overrides)
    except ValidationError as e:
        problems = []
        for error in e.errors():
            name = ".".join(str(part) for part in error["loc"]) or "settings"
            problems.append(f"{name} (HINDSIGHT_{name.upper()}): {error['msg']}")
        raise ConfigError("invalid settings: " + "; ".join(problems)) from None
