"""``MemoryClient``: the blocking twin of ``AsyncMemoryClient``.

It holds no logic of its own: each method runs the async client's method on
a private event loop in a background thread, so both can never drift apart.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from hindsight_redis.deadletters import DeadLetter
from hindsight_redis.models import MemoryRecord, SearchHit, SearchMode, WriteReceipt
from hindsight_redis.settings import Settings
from hindsight_redis.store import AsyncMemoryClient

T = TypeVar("T")


class MemoryClient:
    """Blocking client with the same methods as ``AsyncMemoryClient``."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="hindsight-client", daemon=True
        )
        self._thread.start()
        self._client = AsyncMemoryClient(settings)
        self.settings = self._client.settings

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

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

    def write(self, content: str, **fields: Any) -> WriteReceipt:
        """See ``AsyncMemoryClient.write``."""
        return self._run(self._client.write(content, **fields))

    def write_many(self, items: Sequence[Mapping[str, Any]]) -> list[WriteReceipt]:
        """See ``AsyncMemoryClient.write_many``."""
        return self._run(self._client.write_many(items))

    def search(
        self, query: str, *, top_k: int = 5, mode: SearchMode = "hybrid", **filters: Any
    ) -> list[SearchHit]:
        """See ``AsyncMemoryClient.search``."""
        return self._run(self._client.search(query, top_k=top_k, mode=mode, **filters))

    def get(self, memory_id: str) -> MemoryRecord | None:
        """See ``AsyncMemoryClient.get``."""
        return self._run(self._client.get(memory_id))

    def forget(self, memory_id: str) -> MemoryRecord:
        """See ``AsyncMemoryClient.forget``."""
        return self._run(self._client.forget(memory_id))

    def restore(self, memory_id: str) -> MemoryRecord:
        """See ``AsyncMemoryClient.restore``."""
        return self._run(self._client.restore(memory_id))

    def protect(self, memory_id: str, protected: bool = True) -> MemoryRecord:
        """See ``AsyncMemoryClient.protect``."""
        return self._run(self._client.protect(memory_id, protected))

    def dead_letters(self, count: int = 100) -> list[DeadLetter]:
        """See ``AsyncMemoryClient.dead_letters``."""
        return self._run(self._client.dead_letters(count))

    def replay_dead_letters(self, ids: list[str] | None = None) -> list[str]:
        """See ``AsyncMemoryClient.replay_dead_letters``."""
        return self._run(self._client.replay_dead_letters(ids))

    def reindex(self, embedder: str) -> dict[str, Any]:
        """See ``AsyncMemoryClient.reindex``."""
        return self._run(self._client.reindex(embedder))

    def conflicts(self, limit: int = 100) -> list[MemoryRecord]:
        """See ``AsyncMemoryClient.conflicts``."""
        return self._run(self._client.conflicts(limit))

    def stats(self) -> dict[str, Any]:
        """See ``AsyncMemoryClient.stats``."""
        return self._run(self._client.stats())
