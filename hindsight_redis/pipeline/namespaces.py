"""Which namespaces exist under a prefix: the registry set, and a one-off discovery.

Writers add their namespace to ``keys.namespace_registry(prefix)`` on their
first write, and single-namespace workers on start. Streams written before
the registry existed are found by ``discover_once``: a ``SCAN`` for
``{prefix}:{*}:stream`` that adds what it finds to the registry, run by the
first worker serving every namespace and then never again (a marker key says
it was done, so restarting a fleet of workers does not rescan the keyspace).
``ServedNamespaces`` holds a worker's consumers, one per namespace it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal

import redis.asyncio as aioredis

from hindsight_redis.core.keys import glob_escape, namespace_discovery, namespace_registry
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import (
    ConfigError,
    EmbeddingMismatch,
    RedisOutOfMemory,
    redis_errors,
)
from hindsight_redis.settings import IdentitySettings, WorkerSettings

if TYPE_CHECKING:
    from hindsight_redis.pipeline.consumer import NamespaceConsumer

log = logging.getLogger(__name__)
_SCAN_COUNT = 1000
_RETRY_LATER_S = 60.0  # a namespace that could not be served is tried again after this
_MAX_OOM_PAUSE_S = 5.0


def wanted(
    namespaces: Sequence[str] | Literal["*"] | None, default: str
) -> list[str] | Literal["*"]:
    """The namespaces a worker is asked to serve, checked: ``"*"``, a list, or ``[default]``."""
    if namespaces is None:
        return [default]
    if namespaces == "*":
        return "*"
    if isinstance(namespaces, str):
        raise ConfigError(f'namespaces takes a list of names or "*", not the string {namespaces!r}')
    names = list(dict.fromkeys(namespaces))
    if not names:
        raise ConfigError('namespaces is empty: give at least one name, or "*"')
    for name in names:
        try:
            IdentitySettings._safe_name(name)  # the rule of a namespace's name
        except ValueError as e:
            raise ConfigError(f"namespace {name!r}: {e}") from None
    return names


async def register(redis: aioredis.Redis, prefix: str, namespaces: Iterable[str]) -> None:
    """Add ``namespaces`` to the registry of ``prefix``."""
    names = list(namespaces)
    if names:
        with redis_errors("register namespaces"):
            await redis.sadd(namespace_registry(prefix), *names)


async def registered(redis: aioredis.Redis, prefix: str) -> list[str]:
    """Every namespace in the registry of ``prefix``, sorted."""
    with redis_errors("read the namespace registry"):
        members = await redis.smembers(namespace_registry(prefix))
    return sorted(as_text(m) for m in members)


async def discover(redis: aioredis.Redis, prefix: str) -> list[str]:
    """Namespaces that have a stream under ``prefix`` (one ``SCAN``), added to the registry."""
    start, end = f"{prefix}:{{", "}:stream"
    found: set[str] = set()
    with redis_errors("look for namespace streams"):
        async for raw in redis.scan_iter(
            match=glob_escape(start) + "*" + glob_escape(end), count=_SCAN_COUNT, _type="stream"
        ):
            key = as_text(raw)
            name = key[len(start) : -len(end)]
            if name and "}" not in name:  # not a key of a deeper pattern
                found.add(name)
    await register(redis, prefix, found)
    return sorted(found)


async def discover_once(redis: aioredis.Redis, prefix: str) -> None:
    """``discover`` unless a worker already did it under ``prefix``."""
    marker = namespace_discovery(prefix)
    with redis_errors("read the namespace registry"):
        if await redis.exists(marker):
            return
    await discover(redis, prefix)
    with redis_errors("register namespaces"):
        await redis.set(marker, "1")


class ServedNamespaces:
    """The namespaces of ``prefix`` a worker serves, each with its consumer (built by ``make``).

    ``wanted``: a list, or ``"*"`` for every namespace of the registry,
    re-read by ``refresh`` (every ``worker.namespace_refresh_s``). ``strict``:
    a namespace that cannot be served (its index was built with another
    embedder) raises; else it is logged and tried again later while the
    others are served.
    """

    def __init__(
        self,
        prefix: str,
        worker: WorkerSettings,
        wanted: list[str] | Literal["*"],
        make: Callable[[aioredis.Redis, str], NamespaceConsumer],
        *,
        strict: bool,
    ) -> None:
        self.prefix = prefix
        self.worker = worker
        self.wanted = wanted
        self.strict = strict
        self.consumers: dict[str, NamespaceConsumer] = {}
        self.by_stream: dict[str, NamespaceConsumer] = {}
        self._make = make
        self._retry_at: dict[str, float] = {}
        self._next_refresh = 0.0

    @property
    def refresh_due(self) -> bool:
        """True every ``namespace_refresh_s`` when serving more than one given namespace."""
        return not self.strict and time.monotonic() >= self._next_refresh

    async def start(self, redis: aioredis.Redis, stopping: asyncio.Event) -> None:
        """Register or discover the namespaces, then serve them. While Redis is at its
        maxmemory (it refuses to create groups and indexes), wait for room, or ``stopping``."""
        pause_s = 0.0
        while True:
            self.consumers.clear()
            self.by_stream.clear()
            try:
                if self.wanted == "*":
                    await discover_once(redis, self.prefix)
                else:
                    await register(redis, self.prefix, self.wanted)
                await self.refresh(redis)
                return
            except RedisOutOfMemory as e:
                pause_s = min(max(pause_s * 2, 0.1), _MAX_OOM_PAUSE_S)
                log.warning("cannot start serving (%s); retrying in %.1fs", e, pause_s)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), pause_s)
                if stopping.is_set():
                    return

    async def refresh(self, redis: aioredis.Redis) -> None:
        """Serve the namespaces wanted and not served yet (new in the registry, or retried)."""
        self._next_refresh = time.monotonic() + self.worker.namespace_refresh_s
        wanted = self.wanted
        if wanted == "*":
            wanted = await registered(redis, self.prefix)
        now = time.monotonic()
        for namespace in wanted:
            if namespace not in self.consumers and self._retry_at.get(namespace, 0.0) <= now:
                await self._serve(redis, namespace)

    async def _serve(self, redis: aioredis.Redis, namespace: str) -> None:
        consumer = self._make(redis, namespace)
        try:
            await consumer.start()
        except (EmbeddingMismatch, ConfigError) as e:
            if self.strict:
                raise
            self._later(namespace, e)
            return
        self.consumers[namespace] = consumer
        self.by_stream[consumer.keys.stream] = consumer
        self._retry_at.pop(namespace, None)
        if not self.strict:
            log.info("serving namespace %s", namespace)

    def _later(self, namespace: str, error: Exception) -> None:
        log.error("namespace %s is not served for %.0fs: %s", namespace, _RETRY_LATER_S, error)
        self._retry_at[namespace] = time.monotonic() + _RETRY_LATER_S

    def drop(self, consumer: NamespaceConsumer, error: Exception | None = None) -> None:
        """Stop serving ``consumer``'s namespace; with an ``error``, retry it later."""
        self.consumers.pop(consumer.namespace, None)
        self.by_stream.pop(consumer.keys.stream, None)
        if error is not None:
            self._later(consumer.namespace, error)

    async def lost(self, redis: aioredis.Redis, consumers: Sequence[NamespaceConsumer]) -> None:
        """Streams deleted under the worker: recreate them and their group, unless the
        namespace left the registry (``admin.delete_namespace``) while every one is served."""
        kept = await registered(redis, self.prefix) if self.wanted == "*" else None
        for consumer in consumers:
            if kept is None or consumer.namespace in kept:
                await consumer.ensure_group()
                continue
            log.info("namespace %s was deleted; no longer served", consumer.namespace)
            self.drop(consumer)
            await consumer.sweeps.stop()

    def rotation(self, turn: int) -> list[NamespaceConsumer]:
        """The consumers, starting at a different one each turn."""
        consumers = list(self.consumers.values())
        if not consumers:
            return []
        start = turn % len(consumers)
        return consumers[start:] + consumers[:start]
