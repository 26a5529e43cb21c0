"""hindsight-redis: a Redis-backed streaming memory for LLM agents.

Agents write through ``MemoryClient`` / ``AsyncMemoryClient`` (the write is
queued on a Redis Stream and acknowledged at once); ``Worker`` processes
filter, score, summarize, embed and index what is worth keeping; agents
search it with hybrid (vector + keyword) retrieval.

The package is a house of rooms, one per concern. A module imports only from
its own room and the rooms of lower layers (``tests/unit/test_layout.py``
holds every import to this list, type-only ones included), and the adapters
of the last layer import nothing of each other.

Layers, lowest first:

    errors                 the error tree, and the one boundary where Redis errors become it
    core                   pure: records, requests, key names, events, the memory hash, RESP
    language               pure: dates and times, question types, facts, the text of rules
    settings               configuration, in groups
    redis                  reaching Redis: connections, the cluster client, Lua, the embedded server
    providers              embedders and the LLM client
    index                  a namespace's RediSearch index: schema, record, filters, counts, upgrades
    write                  the write path to the stream
    lifecycle              forgetting, access counts, cold storage, conflict review
    trust                  what may be stored, held and erased: secrets, poisoning, erasure, audit
    pipeline               the worker: consumers, stages, commits, the refiner
    search                 a search: query analysis, legs, fusion, re-rankers
    ops                    operators' reads: stats, admin, metrics, doctor, evaluation
    client                 the library's front doors, async and sync
    service                the tools agents get, MCP over stdio and HTTP, tokens, the web console
    cli, integrations      adapters: the command line, agent frameworks
"""

from __future__ import annotations

import importlib
import typing

from hindsight_redis.errors import (
    Backpressure,
    ConfigError,
    EmbeddingError,
    EmbeddingMismatch,
    ExportFileError,
    HindsightError,
    InvalidArgument,
    InvalidMemory,
    InvalidQuery,
    MemoryProtected,
    NotARedisServer,
    NotFound,
    PoisonMessage,
    ProviderError,
    RedisAccessDenied,
    RedisCommandError,
    RedisOutOfMemory,
    RedisUnavailable,
    SearchModuleMissing,
    ServerError,
    SweepBusy,
    WriteTimeout,
)

if typing.TYPE_CHECKING:
    from hindsight_redis.client.async_client import AsyncMemoryClient
    from hindsight_redis.client.sync_client import MemoryClient
    from hindsight_redis.core.models import (
        MemoryRecord,
        SearchFilters,
        SearchHit,
        WriteReceipt,
    )
    from hindsight_redis.core.requests import SearchOptions, WriteItem, WriteOptions
    from hindsight_redis.lifecycle.cold import ExportReport, ImportReport, PurgeReport
    from hindsight_redis.lifecycle.forgetting import SweepReport
    from hindsight_redis.lifecycle.review import ConflictResolution
    from hindsight_redis.ops.admin import DeadLetter
    from hindsight_redis.pipeline.stages.base import Candidate, Stage
    from hindsight_redis.pipeline.worker import Worker
    from hindsight_redis.settings import Settings
    from hindsight_redis.trust.audit import AuditEntry
    from hindsight_redis.trust.erasure import ErasureReceipt

# The public names and the modules that define them: imported on first use
# (``__getattr__``), so ``import hindsight_redis`` does not load Redis, numpy,
# redisvl and the models for a program that only names an error or a setting.
_LAZY: dict[str, str] = {
    "AsyncMemoryClient": "hindsight_redis.client.async_client",
    "MemoryClient": "hindsight_redis.client.sync_client",
    "MemoryRecord": "hindsight_redis.core.models",
    "SearchFilters": "hindsight_redis.core.models",
    "SearchHit": "hindsight_redis.core.models",
    "WriteReceipt": "hindsight_redis.core.models",
    "SearchOptions": "hindsight_redis.core.requests",
    "WriteItem": "hindsight_redis.core.requests",
    "WriteOptions": "hindsight_redis.core.requests",
    "ExportReport": "hindsight_redis.lifecycle.cold",
    "ImportReport": "hindsight_redis.lifecycle.cold",
    "PurgeReport": "hindsight_redis.lifecycle.cold",
    "SweepReport": "hindsight_redis.lifecycle.forgetting",
    "ConflictResolution": "hindsight_redis.lifecycle.review",
    "DeadLetter": "hindsight_redis.ops.admin",
    "Candidate": "hindsight_redis.pipeline.stages.base",
    "Stage": "hindsight_redis.pipeline.stages.base",
    "Worker": "hindsight_redis.pipeline.worker",
    "Settings": "hindsight_redis.settings",
    "AuditEntry": "hindsight_redis.trust.audit",
    "ErasureReceipt": "hindsight_redis.trust.erasure",
}


def __getattr__(name: str) -> typing.Any:
    """A public name, imported from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hindsight_redis' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AsyncMemoryClient",
    "AuditEntry",
    "Backpressure",
    "Candidate",
    "ConfigError",
    "ConflictResolution",
    "DeadLetter",
    "EmbeddingError",
    "EmbeddingMismatch",
    "ErasureReceipt",
    "ExportFileError",
    "ExportReport",
    "HindsightError",
    "ImportReport",
    "InvalidArgument",
    "InvalidMemory",
    "InvalidQuery",
    "MemoryClient",
    "MemoryProtected",
    "MemoryRecord",
    "NotARedisServer",
    "NotFound",
    "PoisonMessage",
    "ProviderError",
    "PurgeReport",
    "RedisAccessDenied",
    "RedisCommandError",
    "RedisOutOfMemory",
    "RedisUnavailable",
    "SearchFilters",
    "SearchHit",
    "SearchModuleMissing",
    "SearchOptions",
    "ServerError",
    "Settings",
    "Stage",
    "SweepBusy",
    "SweepReport",
    "Worker",
    "WriteItem",
    "WriteOptions",
    "WriteReceipt",
    "WriteTimeout",
]
