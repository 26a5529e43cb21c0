"""A sweeper process for the crash test: ``sweep --max-active N``, slowed between steps.

Run as ``python tests/integration/sweep_process.py MAX_ACTIVE BATCH PAUSE_S`` with
HINDSIGHT_* variables set; it pauses PAUSE_S before each step of BATCH memories,
so a kill -9 lands part way through.
"""

from __future__ import annotations

import asyncio
import sys
import time

from hindsight_redis import Settings
from hindsight_redis.core.keys import Keys
from hindsight_redis.lifecycle.forgetting import sweep
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.redis.connection import connect


def _pause() -> bool:
    time.sleep(float(sys.argv[3]))  # not a wait: a slow sweep, for the kill to land mid-way
    return False


async def main() -> None:
    settings = Settings()
    redis = await connect(settings.connection, settings.server, settings.worker)
    await sweep(
        redis,
        Keys(settings.key_prefix, settings.namespace),
        RetentionPolicy.from_settings(settings.retention),
        threshold=None,
        max_active=int(sys.argv[1]),
        batch=int(sys.argv[2]),
        should_stop=_pause,
    )


if __name__ == "__main__":
    asyncio.run(main())
