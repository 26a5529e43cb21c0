"""``doctor``'s memory check: the eviction policy under ``maxmemory``, and the room left.

With ``maxmemory`` set, any policy but ``noeviction`` lets Redis delete keys to make
room: an evicted stream loses accepted writes not yet processed, an evicted consumer
group forgets what was delivered, an evicted memory hash vanishes from search, and
nobody is told. Under ``noeviction`` Redis refuses writes instead (``RedisOutOfMemory``,
retryable), which clients and workers wait out.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import HindsightError, redis_errors
from hindsight_redis.ops.doctor.checks import DoctorReport

_NEARLY_FULL = 0.9


async def check_memory(client: aioredis.Redis, report: DoctorReport) -> None:
    """A problem when Redis may evict keys (``maxmemory`` with a policy other than
    ``noeviction``), or when it is near its ``maxmemory``; the use as a fact."""
    try:
        with redis_errors("read the memory use"):
            raw = await client.info("memory")
    except HindsightError:
        return  # INFO refused (an ACL): nothing to check
    info = {as_text(k): as_text(v) for k, v in raw.items()}
    try:
        used, limit = int(info["used_memory"]), int(info.get("maxmemory", "0"))
    except (KeyError, ValueError):
        return
    policy = info.get("maxmemory_policy", "noeviction")
    if not limit:
        report.facts["memory"] = f"{_mib(used)} used, no maxmemory (policy {policy})"
        return
    share = used / limit
    report.facts["memory"] = (
        f"{_mib(used)} used of maxmemory {_mib(limit)} ({share:.0%}), policy {policy}"
    )
    if policy != "noeviction":
        report.problems.append(
            f"maxmemory-policy is {policy} with maxmemory {_mib(limit)}: at the limit Redis "
            "deletes keys, and an evicted stream, consumer group or memory loses accepted "
            "writes silently; set maxmemory-policy noeviction (writes are then refused, "
            "retryably, until there is room)"
        )
    elif share >= _NEARLY_FULL:
        report.problems.append(
            f"Redis uses {share:.0%} of its maxmemory {_mib(limit)}: at the limit it refuses "
            "every write; raise maxmemory, or archive and purge old memories"
        )


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"
