"""Errors raised by hindsight-redis.

Every error derives from one root, so callers can catch ``HindsightError``.
Builtin mixins are used where they fit, so ``except ValueError`` still works
for bad input. ``retryable`` tells workers (and MCP clients) whether trying
the same thing again may succeed.

::

    HindsightError
    ├── ConfigError (ValueError)              bad or contradictory settings
    ├── InvalidMemory (ValueError)            a write or query failed validation
    ├── Backpressure                          the stream backlog is over its limit   [retryable]
    ├── WriteTimeout (TimeoutError)           wait=True / WAITAOF not confirmed in time [retryable]
    ├── ServerError                           the embedded Redis could not start/stop
    │   ├── ServerBinaryMissing               redis-server or a module is not installed
    │   ├── PortInUse                         the chosen port is taken
    │   └── DataDirError                      the data dir is not writable
    ├── RedisUnavailable (ConnectionError)    Redis could not be reached            [retryable]
    ├── MissingSearchModule                   Redis answers but has no search module
    ├── EmbeddingError                        an embedding provider failed          [retryable]
    ├── EmbeddingMismatch (ValueError)        model/dimension differ from the index's
    │   └── IndexMoved                        a reindex swapped the index under a worker
    ├── ProviderError                         an LLM provider failed                [retryable]
    ├── PoisonMessage (ValueError)            a stream entry cannot be decoded
    └── NotFound (KeyError)                   no memory with that id
"""

from __future__ import annotations


class HindsightError(Exception):
    """Root of every error raised by hindsight-redis."""

    retryable: bool = False


class ConfigError(HindsightError, ValueError):
    """Settings are invalid or contradict each other."""


class InvalidMemory(HindsightError, ValueError):
    """A memory or a query failed validation; the message says which field and why."""


class Backpressure(HindsightError):
    """The stream backlog is at its limit; the write (or the whole batch) was not accepted."""

    retryable = True

    def __init__(self, backlog: int, limit: int) -> None:
        super().__init__(
            f"write rejected: {backlog} unprocessed entries, limit is {limit}; "
            "start more workers or retry later (HINDSIGHT_MAX_BACKLOG raises the limit)"
        )
        self.backlog = backlog
        self.limit = limit


class WriteTimeout(HindsightError, TimeoutError):
    """A write was accepted but its confirmation did not arrive in time."""

    retryable = True


class ServerError(HindsightError):
    """The embedded Redis server could not be started, reached or stopped."""


class ServerBinaryMissing(ServerError):
    """redis-server or a required module file is not installed."""


class PortInUse(ServerError):
    """The port chosen for the embedded server is already taken."""


class DataDirError(ServerError):
    """The embedded server's data directory cannot be created or written."""


class RedisUnavailable(HindsightError, ConnectionError):
    """Redis could not be reached."""

    retryable = True


class MissingSearchModule(HindsightError):
    """Redis answers but has no search module (RediSearch / Redis Query Engine)."""


class EmbeddingError(HindsightError):
    """An embedding provider failed."""

    retryable = True


class EmbeddingMismatch(HindsightError, ValueError):
    """The embedder's model or dimension differs from the one the index was built with."""


class IndexMoved(EmbeddingMismatch):
    """The index was rebuilt under another embedder while a worker was running."""


class ProviderError(HindsightError):
    """An LLM provider (through litellm) failed."""

    retryable = True


class PoisonMessage(HindsightError, ValueError):
    """A stream entry cannot be decoded; retrying will never help."""


class NotFound(HindsightError, KeyError):
    """No memory with that id exists in the namespace."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "not found"
