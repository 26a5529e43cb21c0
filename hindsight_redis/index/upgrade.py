"""The data format of a namespace, and the steps that bring data of earlier releases to it.

Each namespace records the format its data is in (``Keys.data_format``: ``version``,
and per step the time it ran). A namespace created by this release starts at
``DATA_FORMAT_VERSION``; one written before the format was recorded is at version 1.
Opening the index (``MemoryIndex.ensure``: a worker's start, a client's first search)
runs the ``STEPS`` of the versions above the recorded one, in order, each recorded
once done. Every step is idempotent (a crash, or two processes opening at once, runs it
again harmlessly), and none deletes a memory: data is rewritten in place, an index is
rebuilt beside the old one, which serves searches until the alias moves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.asyncio import Redis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import redis_errors
from hindsight_redis.index.claims import expire_content_claims

logger = logging.getLogger(__name__)

DATA_FORMAT_VERSION = 3
"""The format this release writes. Bump it with a step in ``STEPS`` whenever data or the
index definition of an earlier release needs work to be read by this one."""


@dataclass(frozen=True, slots=True)
class Step:
    """One upgrade: the version it brings data to, its name, and what it does."""

    version: int
    name: str
    what: str
    index: bool = False
    """True: the step is ``MemoryIndex``'s (the index definition rebuilt from the current
    schema over the same vectors); else ``run`` rewrites data."""
    run: Callable[[Redis, Keys], Awaitable[None]] | None = None


async def _expire_claims(redis: Redis, keys: Keys) -> None:
    """Step 3: content claims of an earlier release, kept forever there, get an expiry."""
    given = await expire_content_claims(redis, keys)
    logger.info(
        "%s: %d content claims of an earlier release given an expiry", keys.namespace, given
    )


STEPS: tuple[Step, ...] = (
    Step(
        2,
        "index-definition",
        "rebuild the index from this release's schema (occurred_at INDEXMISSING) over the "
        "same hashes and vectors, when its definition differs; swap the alias, drop the old",
        index=True,
    ),
    Step(
        3,
        "content-claims-expire",
        "give the content claims of earlier releases (kept forever) the outcomes' expiry",
        run=_expire_claims,
    ),
)
"""Every step, by version. A data rewrite (a renamed hash field...) gets a ``run``."""


@dataclass(frozen=True, slots=True)
class DataFormat:
    """A namespace's recorded format: ``version`` (0: no data yet), the steps run (name ->
    unix time), the release that last upgraded it and the index being rebuilt."""

    version: int
    steps: dict[str, float]
    release: str = ""
    building: str = ""
    """The index an upgrade is building (``""``: none)."""

    @property
    def current(self) -> bool:
        """Whether the data is in this release's format (or a newer one)."""
        return self.version >= DATA_FORMAT_VERSION


async def read_format(redis: Redis, keys: Keys) -> DataFormat:
    """The recorded format of ``keys.namespace``: version 1 for data of a release before
    the record existed (an index record, no format), 0 for a namespace with neither."""
    with redis_errors("read the data format"):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.data_format)
            pipe.exists(keys.index_meta)
            raw, has_index = await pipe.execute()
    fields = {as_text(k): as_text(v) for k, v in raw.items()}
    building = fields.get("building", "")
    if "version" not in fields:
        return DataFormat(version=1 if has_index else 0, steps={}, building=building)
    steps = {k[5:]: float(v) for k, v in fields.items() if k.startswith("step:")}
    release = fields.get("release", "")
    return DataFormat(int(fields["version"]), steps, release=release, building=building)


async def record_current(redis: Redis, keys: Keys) -> None:
    """Record a namespace created by this release as in its format (kept if recorded)."""
    with redis_errors("record the data format"):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hsetnx(keys.data_format, "version", str(DATA_FORMAT_VERSION))
            pipe.hsetnx(keys.data_format, "release", _release())
            await pipe.execute()


async def upgrade(
    redis: Redis, keys: Keys, rebuild_index: Callable[[], Awaitable[bool]]
) -> DataFormat:
    """Run the steps above the recorded version, in order, recording each; the format
    after. ``rebuild_index`` is the index's step (``Step.index``): False while the
    rebuilt index is still being built, which leaves it and the later steps for the next
    call."""
    found = await read_format(redis, keys)
    if found.version == 0 or found.current:
        if found.version > DATA_FORMAT_VERSION:
            logger.warning(
                "namespace %s holds data format %d, newer than this release's %d: "
                "upgrade hindsight-redis",
                keys.namespace,
                found.version,
                DATA_FORMAT_VERSION,
            )
        return found
    for step in STEPS:
        if step.version <= found.version:
            continue
        logger.info(
            "namespace %s: upgrading data to format %d (%s)",
            keys.namespace,
            step.version,
            step.name,
        )
        if step.index and not await rebuild_index():
            break
        elif step.run is not None:
            await step.run(redis, keys)
        with redis_errors("record the data format"):
            await redis.hset(
                keys.data_format,
                mapping={
                    "version": str(step.version),
                    f"step:{step.name}": repr(time.time()),
                    "release": _release(),
                },
            )
    return await read_format(redis, keys)


def _release() -> str:
    from hindsight_redis.core.version import package_version

    return package_version()
