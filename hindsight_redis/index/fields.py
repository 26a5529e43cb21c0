"""Fields added to the index schema after an index was created, added to that index.

An index built by an earlier release lacks the fields added since (``schema.py``
names them); ``add_missing`` adds them in place with ``FT.ALTER ... SCHEMA ADD``
when the index is opened, so it keeps serving every search and filter without a
reindex. Redis then indexes the new field of the memories already stored in the
background; memories without the field are not affected.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.fields import (
    OCCURRED_FIELD,
    PROVENANCE_FIELD,
    REVIEWED_FIELD,
    SINGLE_SEPARATOR,
)
from hindsight_redis.core.resp import as_text, reply_map
from hindsight_redis.errors import RedisCommandError, redis_errors

logger = logging.getLogger(__name__)

_SINGLE_TAG = ("TAG", "SEPARATOR", SINGLE_SEPARATOR, "CASESENSITIVE")  # as index.schema's
ADDED_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (OCCURRED_FIELD, ("NUMERIC", "INDEXMISSING")),
    (PROVENANCE_FIELD, _SINGLE_TAG),
    (REVIEWED_FIELD, _SINGLE_TAG),
)
"""Each field added after the first release, with its ``FT.ALTER`` arguments."""


def attribute_names(info: Any) -> set[str]:
    """The attribute names of an ``FT.INFO`` reply (RESP2 list or RESP3 map)."""
    names = set()
    for attribute in reply_map(info).get("attributes") or ():
        fields = reply_map(attribute)
        names.add(as_text(fields.get("attribute") or fields.get("identifier")))
    return names


async def add_missing(redis: Redis, index: str) -> list[str]:
    """Add to ``index`` the ``ADDED_FIELDS`` it lacks; the names added."""
    with redis_errors("read the index"):
        info = await redis.execute_command("FT.INFO", index)  # type: ignore[no-untyped-call]
    present = attribute_names(info)
    added = []
    for name, kind in ADDED_FIELDS:
        if name in present:
            continue
        try:
            with redis_errors("add a field to the search index"):
                await redis.execute_command(  # type: ignore[no-untyped-call]
                    "FT.ALTER", index, "SCHEMA", "ADD", name, *kind
                )
        except RedisCommandError as e:
            if "duplicate" not in e.reply.lower():  # another process added it first
                raise
            continue
        logger.info("index %s: added field %s", index, name)
        added.append(name)
    return added
