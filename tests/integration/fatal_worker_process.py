"""A worker process that dies (``os._exit``) on a batch holding a given text.

Run as ``python tests/integration/fatal_worker_process.py TEXT`` with HINDSIGHT_*
variables set: a burst worker, as a crash in a model or the OOM killer would end
it mid-batch, with no chance to acknowledge, record an error or clean up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from hindsight_redis import Settings, Worker
from hindsight_redis.pipeline.stages.base import Candidate

KILLED = 70  # the exit status of a process the poison killed


class Fatal:
    """Ends the process when any candidate of the batch holds ``argv[1]``."""

    name = "fatal"

    async def process(self, batch: Sequence[Candidate]) -> None:
        if any(sys.argv[1] in c.content for c in batch):
            os._exit(KILLED)


if __name__ == "__main__":
    Worker(Settings(), extra_stages=[Fatal()]).run(burst=True)
