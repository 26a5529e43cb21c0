"""Workers inside a server's process, so a lone ``hindsight-redis mcp`` indexes what it is given.

A worker that fails is logged and started again after a pause; the server
keeps answering meanwhile (writes are accepted, and indexed once it is back).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from hindsight_redis.errors import HindsightError
from hindsight_redis.pipeline.worker import Worker
from hindsight_redis.settings import Settings

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def background_workers(
    settings: Settings, count: int, *, all_namespaces: bool = False
) -> AsyncIterator[None]:
    """``count`` in-process workers for the life of the block (0: none).

    A worker that fails is logged and started again after a pause; the server
    keeps answering meanwhile (writes are accepted, and indexed once it is back).
    """
    workers = [_in_process_worker(settings, all_namespaces) for _ in range(count)]

    async def supervise(worker: Worker) -> None:
        while True:
            try:
                await worker.run_async()
                return
            except HindsightError as e:
                log.warning("in-process worker stopped (%s); restarting in 2 s", e)
                await asyncio.sleep(2.0)

    tasks = [asyncio.create_task(supervise(w), name="hindsight-worker") for w in workers]
    try:
        yield
    finally:
        for worker in workers:
            worker.stop()
        for task in tasks:
            try:
                await asyncio.wait_for(task, timeout=10.0)
            except (TimeoutError, asyncio.CancelledError, HindsightError):
                task.cancel()


def _in_process_worker(settings: Settings, all_namespaces: bool) -> Worker:
    """A worker of the settings' namespace, or of every namespace (HTTP: tokens choose it)."""
    return Worker(settings, namespaces="*" if all_namespaces else None)
