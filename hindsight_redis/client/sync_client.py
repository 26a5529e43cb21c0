"""``MemoryClient``: the blocking twin of ``AsyncMemoryClient``.

It holds no logic of its own: each method is the async client's method, run
on a private event loop in a background thread. The methods are made from
the async ones (``_blocking``), so they carry the same signatures and
docstrings, for type checkers and ``help()`` alike, and can never drift.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.settings import Settings

P = ParamSpec("P")
T = TypeVar("T")


def _blocking(
    method: Callable[Concatenate[Any, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[MemoryClient, P], T]:
    """The blocking form of an ``AsyncMemoryClient`` method (or of a ``client.pool`` one
    it offers), found by name on the async client when called."""
    name = method.__name__

    def run(self: MemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        bound: Callable[P, Coroutine[Any, Any, T]] = getattr(self._client, name)
        return self._run(bound(*args, **kwargs))

    functools.update_wrapper(run, method)  # name, docstring, signature (via __wrapped__)
    return run


class MemoryClient:
    """Blocking client with the same methods as ``AsyncMemoryClient``."""

    def __init__(self, settings: Settings | None = None) -> None:
        # The async client first: bad settings raise here, before any thread exists.
        self._client = AsyncMemoryClient(settings)
        self.settings = self._client.settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="hindsight-client", daemon=True
        )
        self._thread.start()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def call(self, action: Callable[[AsyncMemoryClient], Coroutine[Any, Any, T]]) -> T:
        """Run ``action(async_client)`` on this client's loop; its result (blocking).

        For adapters that build on the async client and serve blocking callers.
        """
        return self._run(action(self._client))

    async def acall(self, action: Callable[[AsyncMemoryClient], Coroutine[Any, Any, T]]) -> T:
        """``call`` from any event loop: awaits the result without blocking that loop.

        The work runs on this client's own loop, so one client serves blocking
        code and every event loop of the process alike.
        """
        future = asyncio.run_coroutine_threadsafe(action(self._client), self._loop)
        return await asyncio.wrap_future(future)

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection and stop the background loop."""
        if self._loop.is_closed():
            return
        self._run(self._client.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    write = _blocking(AsyncMemoryClient.write)
    write_many = _blocking(AsyncMemoryClient.write_many)
    search = _blocking(AsyncMemoryClient.search)
    get = _blocking(AsyncMemoryClient.get)
    forget = _blocking(AsyncMemoryClient.forget)
    restore = _blocking(AsyncMemoryClient.restore)
    protect = _blocking(AsyncMemoryClient.protect)
    sweep = _blocking(AsyncMemoryClient.sweep)
    export = _blocking(AsyncMemoryClient.export)
    purge_exported = _blocking(AsyncMemoryClient.purge_exported)
    import_file = _blocking(AsyncMemoryClient.import_file)
    stats = _blocking(AsyncMemoryClient.stats)
    dead_letters = _blocking(AsyncMemoryClient.dead_letters)
    replay_dead_letters = _blocking(AsyncMemoryClient.replay_dead_letters)
    conflicts = _blocking(AsyncMemoryClient.conflicts)
    resolve_conflict = _blocking(AsyncMemoryClient.resolve_conflict)
    conflict_resolutions = _blocking(AsyncMemoryClient.conflict_resolutions)
    held = _blocking(AsyncMemoryClient.held)
    approve = _blocking(AsyncMemoryClient.approve)
    reject = _blocking(AsyncMemoryClient.reject)
    reindex = _blocking(AsyncMemoryClient.reindex)
    erase = _blocking(AsyncMemoryClient.erase)
    audit = _blocking(AsyncMemoryClient.audit)
    evaluate = _blocking(AsyncMemoryClient.evaluate)
