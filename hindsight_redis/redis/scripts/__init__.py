"""Every Lua script of the package: each state change that must be atomic.

Declared with ``lua.redis_script``: the signature names the KEYS and ARGV, the
docstring is the Lua body. Every key a script touches comes in KEYS and
shares the namespace hash tag, so the scripts also run on a cluster.
``stream``: the write path and the workers; ``memories``: refine, access
counts, updates; ``lifecycle``: forget, sweeps, purge and import; ``conflicts``:
conflict review; ``items``: keyed items (``client/items.py``); ``held``: the review
of held writes (``trust.held``); ``erasure``: streams rebuilt without erased entries,
memories unlinked from them (``trust.erasure``).
"""

from hindsight_redis.redis.lua import execute
from hindsight_redis.redis.scripts.conflicts import resolve_pair, undo_pair
from hindsight_redis.redis.scripts.erasure import rebuild_stream, unlink_erased
from hindsight_redis.redis.scripts.held import reject_held, release_held
from hindsight_redis.redis.scripts.items import delete_item, put_item, retarget_item
from hindsight_redis.redis.scripts.lifecycle import (
    archive_if_unchanged,
    archive_one,
    import_if_absent,
    lease_acquire,
    lease_release,
    lease_renew,
    purge_if_unchanged,
    release_claims,
)
from hindsight_redis.redis.scripts.memories import (
    count_hits,
    flush_access,
    record_if_absent,
    refine,
    update_existing,
)
from hindsight_redis.redis.scripts.stream import (
    commit,
    dead_letter,
    drop_at_edge,
    leave_group,
    neighbours,
    replay,
    trim_acked,
    write_events,
)

MEMORIES_PER_CALL = 8
"""Most memories one script call changes: each change re-indexes the memory (its
vectors too, about 1 ms of Redis time at 100,000 memories), and a script holds
Redis for its whole run, so batches are split into calls of this size."""

__all__ = [
    "MEMORIES_PER_CALL",
    "archive_if_unchanged",
    "archive_one",
    "commit",
    "count_hits",
    "dead_letter",
    "delete_item",
    "drop_at_edge",
    "execute",
    "flush_access",
    "import_if_absent",
    "lease_acquire",
    "lease_release",
    "lease_renew",
    "leave_group",
    "neighbours",
    "purge_if_unchanged",
    "put_item",
    "rebuild_stream",
    "record_if_absent",
    "refine",
    "reject_held",
    "release_claims",
    "release_held",
    "replay",
    "resolve_pair",
    "retarget_item",
    "trim_acked",
    "undo_pair",
    "unlink_erased",
    "update_existing",
    "write_events",
]
