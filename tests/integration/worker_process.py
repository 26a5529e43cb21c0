"""A worker process for crash tests: the default pipeline plus a slow stage.

Run as ``python tests/integration/worker_process.py`` with HINDSIGHT_* variables set.
On a clean exit it prints its ``WorkerReport`` as one JSON line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Sequence

from hindsight_redis import Settings, Worker
from hindsight_redis.pipeline.stages.base import Candidate


class Slow:
    """Keeps the worker busy mid-batch, so a kill lands between read and ack.

    The first batch takes ``argv[1]`` seconds, later ones ``argv[3]`` (default
    the same): a long later delay parks the worker mid-batch for certain.
    """

    name = "slow"

    def __init__(self) -> None:
        self.batches = 0

    async def process(self, batch: Sequence[Candidate]) -> None:
        first = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
        later = float(sys.argv[3]) if len(sys.argv) > 3 else first
        self.batches += 1
        await asyncio.sleep(first if self.batches == 1 else later)  # not a wait: a slow stage


if __name__ == "__main__":
    name = sys.argv[2] if len(sys.argv) > 2 else None
    report = Worker(Settings(), name=name, extra_stages=[Slow()]).run(install_signal_handlers=True)
    print(json.dumps(dataclasses.asdict(report)), flush=True)
