"""A worker process for crash tests: the default pipeline plus a slow stage.

Run as ``python tests/integration/worker_process.py`` with HINDSIGHT_* variables set.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from hindsight_redis import Settings, Worker
from hindsight_redis.pipeline.base import Candidate


class Slow:
    """Keeps the worker busy mid-batch, so a kill lands between read and ack."""

    name = "slow"

    async def process(self, batch: Sequence[Candidate]) -> None:
        await asyncio.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.2)


if __name__ == "__main__":
    Worker(Settings(), name=sys.argv[2] if len(sys.argv) > 2 else None, extra_stages=[Slow()]).run(
        install_signal_handlers=True
    )
