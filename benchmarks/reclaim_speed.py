"""A dead consumer's batch, reclaimed, against the same batch read new: burst worker time.

Reclaimed entries run apart from new ones, in batches of a sixteenth
(``consumer.reclaimed_chunks``), so an entry that kills its worker does not
take its batch-mates to the dead letters. This measures what that costs a
plain recovery: 256 LoCoMo turns either read as new by a burst worker, or
first read by a consumer that "dies" (never acknowledges) and then
reclaimed (``claim_idle_ms`` 200 ms, the wait not timed). Alternating, five
of each; contextual vectors off.

Run:  python benchmarks/reclaim_speed.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis import AsyncMemoryClient, Settings, Worker

from common import embedded_redis, locomo_turns


async def one_run(url: str, reclaimed: bool, turns: list[str]) -> float:
    """Seconds for a burst worker to process 256 writes, new or reclaimed."""
    settings = Settings(
        redis_url=url, key_prefix=f"r{uuid.uuid4().hex[:6]}", namespace="rec",
        profile="ephemeral", claim_idle_ms=200, max_backlog=1_000_000,
        contextual_embedder="none",
    )  # fmt: skip
    async with AsyncMemoryClient(settings) as client:
        await Worker(settings).run_async(burst=True)  # the group and the index
        await client.write_many([{"content": f"{t} ({uuid.uuid4().hex[:4]})"} for t in turns])
        if reclaimed:  # a consumer that read the batch and died
            await client.redis.xreadgroup(
                client.keys.group, "dead", {client.keys.stream: ">"}, count=len(turns)
            )
            await asyncio.sleep(0.3)
        started = time.perf_counter()
        await Worker(settings).run_async(burst=True)
        return time.perf_counter() - started


async def run(url: str) -> None:
    """Alternate new and reclaimed runs; print each and the medians."""
    turns = [t for t in locomo_turns() if len(t) > 60][:256]
    times: dict[str, list[float]] = {"new": [], "reclaimed": []}
    for label in ("new", "reclaimed") * 5:
        seconds = await one_run(url, label == "reclaimed", turns)
        times[label].append(seconds)
        print(f"{label}: {seconds:.2f} s")
    for label, values in times.items():
        print(f"{label} median: {statistics.median(values):.2f} s for {len(turns)} writes")


if __name__ == "__main__":
    with embedded_redis() as url:
        asyncio.run(run(url))
