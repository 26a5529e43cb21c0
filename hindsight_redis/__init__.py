"""hindsight-redis: a Redis-backed streaming memory for LLM agents.

Agents write through ``MemoryClient`` / ``AsyncMemoryClient`` (the write is
queued on a Redis Stream and acknowledged at once); ``Worker`` processes
filter, score, summarize, embed and index what is worth keeping; agents
search it with hybrid (vector + keyword) retrieval.
"""

from hindsight_redis.errors import (
    Backpressure,
    EmbeddingMismatch,
    HindsightError,
    InvalidMemory,
    NotFound,
    RedisUnavailable,
    WriteTimeout,
)
from hindsight_redis.models import MemoryRecord, SearchFilters, SearchHit, WriteReceipt
from hindsight_redis.pipeline.worker import Worker
from hindsight_redis.settings import Settings
from hindsight_redis.store import AsyncMemoryClient
from hindsight_redis.sync_client import MemoryClient

__all__ = [
    "AsyncMemoryClient",
    "Backpressure",
    "EmbeddingMismatch",
    "HindsightError",
    "InvalidMemory",
    "MemoryClient",
    "MemoryRecord",
    "NotFound",
    "RedisUnavailable",
    "SearchFilters",
    "SearchHit",
    "Settings",
    "Worker",
    "WriteReceipt",
    "WriteTimeout",
]
