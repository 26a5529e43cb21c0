"""hindsight-redis: a Redis-backed streaming memory for LLM agents.

Agents write through ``MemoryClient`` / ``AsyncMemoryClient`` (the write is
queued on a Redis Stream and acknowledged at once); ``Worker`` processes
filter, score, summarize, embed and index what is worth keeping; agents
search it with hybrid (vector + keyword) retrieval.
"""

from hindsight_redis.client import AsyncMemoryClient
from hindsight_redis.errors import (
    Backpressure,
    ConfigError,
    EmbeddingMismatch,
    HindsightError,
    InvalidArgument,
    InvalidMemory,
    InvalidQuery,
    NotARedisServer,
    NotFound,
    RedisAccessDenied,
    RedisCommandError,
    RedisUnavailable,
    SearchModuleMissing,
    WriteTimeout,
)
from hindsight_redis.models import MemoryRecord, SearchFilters, SearchHit, WriteReceipt
from hindsight_redis.pipeline.worker import Worker
from hindsight_redis.review import ConflictResolution
from hindsight_redis.settings import Settings
from hindsight_redis.sync_client import MemoryClient

__all__ = [
    "AsyncMemoryClient",
    "Backpressure",
    "ConfigError",
    "ConflictResolution",
    "EmbeddingMismatch",
    "HindsightError",
    "InvalidArgument",
    "InvalidMemory",
    "InvalidQuery",
    "MemoryClient",
    "MemoryRecord",
    "NotARedisServer",
    "NotFound",
    "RedisAccessDenied",
    "RedisCommandError",
    "RedisUnavailable",
    "SearchFilters",
    "SearchHit",
    "SearchModuleMissing",
    "Settings",
    "Worker",
    "WriteReceipt",
    "WriteTimeout",
]
