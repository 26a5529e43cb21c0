"""A sweeper process for the crash tests: ``sweep --max-active N``, slowed between steps,
or killed inside one.

Run as ``python tests/integration/sweep_process.py MAX_ACTIVE BATCH PAUSE_S [KILL_AFTER]``
with HINDSIGHT_* variables set; it pauses PAUSE_S before each step of BATCH memories,
so a kill -9 lands part way through. With KILL_AFTER, the process kills itself (-9)
once KILL_AFTER commands of the archiving phase were answered: inside a step, between
two round trips, wherever they are.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import Any

from hindsight_redis import Settings
from hindsight_redis.core.keys import Keys
from hindsight_redis.lifecycle import forgetting
from hindsight_redis.lifecycle.forgetting import sweep
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.redis.connection import connect


def _pause() -> bool:
    time.sleep(float(sys.argv[3]))  # not a wait: a slow sweep, for the kill to land mid-way
    return False


def _kill_after(round_trips: int) -> None:
    """Make ``apply_sweep`` count the round trips its connection gets answered (commands
    and pipelines; a refused command, such as ``NOSCRIPT``, changed nothing and does not
    count) and kill this process after the ``round_trips``-th."""
    original = forgetting.apply_sweep
    answered = 0

    def answer(reply: Any) -> Any:
        nonlocal answered
        answered += 1
        if answered >= round_trips:
            os.kill(os.getpid(), signal.SIGKILL)
        return reply

    async def apply_then_die(redis: Any, *args: Any, **kwargs: Any) -> Any:
        send, pipeline = redis.execute_command, redis.pipeline

        async def counted(*command: Any, **options: Any) -> Any:
            return answer(await send(*command, **options))

        def counted_pipeline(*a: Any, **k: Any) -> Any:
            pipe = pipeline(*a, **k)
            run = pipe.execute

            async def execute(*args: Any, **kwargs: Any) -> Any:
                return answer(await run(*args, **kwargs))

            pipe.execute = execute
            return pipe

        redis.execute_command, redis.pipeline = counted, counted_pipeline
        return await original(redis, *args, **kwargs)

    forgetting.apply_sweep = apply_then_die  # type: ignore[assignment]


async def main() -> None:
    if len(sys.argv) > 4:
        _kill_after(int(sys.argv[4]))
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
