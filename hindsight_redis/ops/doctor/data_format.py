"""``doctor``'s check of the data format of a namespace (``index.upgrade``): which format
its data is in, and whether this release still has steps to run on it."""

from __future__ import annotations

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import HindsightError
from hindsight_redis.index.upgrade import DATA_FORMAT_VERSION, read_format
from hindsight_redis.ops.doctor.checks import DoctorReport


async def check_data_format(client: Redis, keys: Keys, report: DoctorReport) -> None:
    """Report the data format version of ``keys.namespace``; a problem when it is older
    than this release's (a worker's start upgrades it) or newer (an older release reads it)."""
    try:
        found = await read_format(client, keys)
    except HindsightError as e:
        report.problems.append(f"data format: {e}")
        return
    if found.version == 0:
        report.facts["data_format"] = (
            f"no data yet (this release writes version {DATA_FORMAT_VERSION})"
        )
        return
    upgraded = f", upgraded by {found.release}" if found.release and found.steps else ""
    state = (
        "current"
        if found.version == DATA_FORMAT_VERSION
        else f"this release: {DATA_FORMAT_VERSION}"
    )
    report.facts["data_format"] = f"version {found.version} ({state}{upgraded})"
    if found.building:
        report.facts["data_format"] += f"; upgrading: index {found.building} being built"
    if found.version < DATA_FORMAT_VERSION:
        how = (
            "a running worker finishes the upgrade once the index is built"
            if found.building
            else "start a worker (or run a search) to upgrade it in place"
        )
        report.problems.append(
            f"data format: namespace {keys.namespace!r} holds data of version {found.version}, "
            f"older than this release's {DATA_FORMAT_VERSION}; {how}: searches keep working "
            "meanwhile"
        )
    elif found.version > DATA_FORMAT_VERSION:
        report.problems.append(
            f"data format: namespace {keys.namespace!r} holds data of version {found.version}, "
            f"written by a newer release than this one ({DATA_FORMAT_VERSION}): upgrade "
            "hindsight-redis"
        )
