"""Erasure: remove every copy a namespace holds of some writes, and say so in a receipt.

``erase`` finds the copies (``copies.find_copies``: by ids, writer, tag,
session or source, their union), then, unless ``dry_run``, removes them:

1. the dead letters are rebuilt without theirs (``scripts.rebuild_stream``:
   ``XDEL`` would leave their bytes in the stream's nodes), so none is replayed
   from now on; so are the drop log and the resolutions log, without the lines
   about them; then the stream, without their entries (and those of dead
   letters replayed meanwhile): an entry a worker holds is then only
   acknowledged when it commits, never indexed, and one never processed is
   counted as processed (the backlog drains);
2. per write: the memory hash, outcome, idempotency, notify and refine-claim
   keys, the held write, the access and merge counts, the workers' errors;
3. the memories that stay are unlinked from them (``scripts.unlink_erased``);
   the keyed items pointing at them and the content claims naming them go;
4. their ids join ``Keys.erased`` (an import of an older export skips them),
   the export files still holding them are listed (files are the operator's to
   delete), and the receipt is recorded in the audit trail (action ``erase``:
   who asked, counts, the digest of the ids; never content).

With ``AOF`` on, a rewrite is asked for, so the append-only file stops holding
the erased writes too (``ErasureReceipt.persistence`` says what was asked).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.codec import pack_for_script
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import HindsightError, InvalidArgument, redis_errors
from hindsight_redis.lifecycle.exports import ExportRecord, exports_holding
from hindsight_redis.redis import scripts
from hindsight_redis.redis.cluster import on_shard_of
from hindsight_redis.trust.audit import digest_ids, record_audit
from hindsight_redis.trust.copies import (
    BATCH,
    Copies,
    Selector,
    claims_naming,
    find_copies,
    item_members_key,
    later_entries,
    per_write_key,
)

PLACES = (
    "memories",
    "stream",
    "unprocessed",
    "dead_letters",
    "held",
    "outcomes",
    "idempotency_keys",
    "notify_lists",
    "refine_claims",
    "content_claims",
    "access_counts",
    "merge_log",
    "drop_log",
    "resolutions",
    "links",
    "items",
    "conversations",
)
"""Where an erasure removes copies, in the order a receipt lists them (``unprocessed``:
of the stream entries, those no worker had processed; ``links``: memories that stay,
unlinked from erased ones; ``conversations``: the raw items of the sessions named)."""
MAX_VALUES = 1000
"""Most values one erasure may name (ids, agents, tags, sessions, sources together)."""


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """What an erasure removed (or, ``dry_run``, would remove), where, for whom.

    ``erased``: place (``PLACES``) -> copies removed; ``ids``: the writes erased
    (the ids asked for, and those found), ``digest`` their digest (the audit
    trail's); ``by``/``how``: who asked, identified how; ``at``: when (unix
    seconds); ``exports``: the export files recorded as still holding some of
    them; ``audit_id``: the trail's entry ("" for a dry run); ``persistence``:
    what was asked of the server's persistence (an AOF rewrite).
    """

    namespace: str
    selector: dict[str, list[str]]
    dry_run: bool
    by: str
    how: str
    at: float
    ids: tuple[str, ...]
    digest: str
    erased: dict[str, int]
    exports: tuple[ExportRecord, ...] = ()
    audit_id: str = ""
    persistence: tuple[str, ...] = ()
    elapsed_s: float = 0.0

    @property
    def count(self) -> int:
        """How many writes were erased."""
        return len(self.ids)


def _values(name: str, given: str | Iterable[str] | None) -> frozenset[str]:
    if given is None:
        return frozenset()
    values = [given] if isinstance(given, str) else list(given)
    for value in values:
        if not isinstance(value, str) or not value or len(value) > 256:
            raise InvalidArgument(f"{name} must be non-empty strings of at most 256 characters")
        problem = text_problem(value, controls=False)
        if problem is not None:
            raise InvalidArgument(f"{name} {problem}")
    return frozenset(values)


def selector_of(
    ids: str | Iterable[str] | None = None,
    *,
    agent_id: str | Iterable[str] | None = None,
    tag: str | Iterable[str] | None = None,
    session_id: str | Iterable[str] | None = None,
    source: str | Iterable[str] | None = None,
) -> Selector:
    """The ``Selector`` of an erasure's arguments, checked: ``InvalidArgument`` when one is
    not a usable value, an id is not a memory id, or none is given."""
    selector = Selector(
        ids=_values("ids", ids),
        agent_ids=_values("agent_id", agent_id),
        tags=_values("tag", tag),
        session_ids=_values("session_id", session_id),
        sources=_values("source", source),
    )
    for memory_id in selector.ids:
        if len(memory_id) > 128 or any(c in memory_id for c in "{}:* \n"):
            raise InvalidArgument(f"invalid memory id {memory_id!r}")
    if selector.empty:
        raise InvalidArgument("erase needs ids, an agent_id, a tag, a session_id or a source")
    named = sum(len(v) for v in selector.described().values())
    if named > MAX_VALUES:
        raise InvalidArgument(f"erase takes at most {MAX_VALUES} values at once, got {named}")
    return selector


async def erase(
    redis: Redis,
    keys: Keys,
    selector: Selector,
    *,
    by: str,
    how: str = "",
    dry_run: bool = False,
    retention_days: float = 365.0,
) -> ErasureReceipt:
    """Erase every copy of the writes ``selector`` names (see the module doc); the receipt.

    ``by``/``how``: who asked and how they were identified (the audit trail's). A dry
    run finds and counts, changes nothing and records nothing.
    """
    started = time.monotonic()
    at = time.time()
    with redis_errors("find the copies to erase"):
        copies = await find_copies(redis, keys, selector)
        conversations = await _conversations(redis, keys, selector)
    ids = sorted(copies.ids)
    erased = {**_found_counts(copies), "conversations": len(conversations)}
    exports = tuple(await exports_holding(redis, keys, ids))
    audit_id = ""
    persistence: tuple[str, ...] = ()
    if not dry_run:
        erased = await _remove(redis, keys, copies)
        if conversations:
            with redis_errors("erase the conversations"):
                erased["conversations"] = int(await redis.delete(*conversations))
        audit_id = await record_audit(
            redis,
            keys,
            "erase",
            by,
            retention_days=retention_days,
            how=how,
            ids=ids,
            criteria=",".join(selector.described()),
            criteria_digest=digest_ids(
                f"{name}={value}"
                for name, values in selector.described().items()
                for value in values
            ),
            exports=len(exports),
            **{place: n for place, n in erased.items() if n},
        )
        persistence = await _rewrite_persistence(redis, keys)
    return ErasureReceipt(
        namespace=keys.namespace,
        selector=selector.described(),
        dry_run=dry_run,
        by=by or "operator",
        how=how,
        at=at,
        ids=tuple(ids),
        digest=digest_ids(ids) if ids else "",
        erased=erased,
        exports=exports,
        audit_id=audit_id,
        persistence=persistence,
        elapsed_s=round(time.monotonic() - started, 3),
    )


async def _conversations(redis: Redis, keys: Keys, selector: Selector) -> list[str]:
    """The conversation lists (``client.conversation``) of the sessions named: a session's
    raw items go with its memories (one slot: the namespace's hash tag)."""
    names = [keys.conversation(s) for s in sorted(selector.session_ids)]
    if not names:
        return []
    async with redis.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.exists(name)
        found = await pipe.execute()
    return [name for name, exists in zip(names, found, strict=True) if exists]


def _found_counts(copies: Copies) -> dict[str, int]:
    """The receipt's counts of what was found (a dry run's answer)."""
    counts = dict.fromkeys(PLACES, 0)
    counts.update(
        memories=len(copies.docs),
        stream=len(copies.stream),
        unprocessed=copies.unprocessed,
        dead_letters=len(copies.dead_letters),
        held=len(copies.held),
        content_claims=len(copies.content_claims),
        access_counts=len(copies.access_counts),
        merge_log=len(copies.merge_log),
        drop_log=len(copies.drop_log),
        resolutions=len(copies.resolutions),
        links=len(copies.links),
        items=len(copies.items),
    )
    for kind, found in copies.keys_by_kind.items():
        counts[kind] = len(found)
    return counts


async def _remove(redis: Redis, keys: Keys, copies: Copies) -> dict[str, int]:
    """Remove what ``copies`` found, in the module doc's order; the counts removed."""
    counts = _found_counts(copies)
    ids = sorted(copies.ids)
    with redis_errors("erase the stream entries"):
        for stream, drop, place in (
            (keys.dead_letters, copies.dead_letters, "dead_letters"),
            (keys.recent_drops, copies.drop_log, "drop_log"),
            (keys.resolutions, copies.resolutions, "resolutions"),
        ):
            if drop or stream == keys.dead_letters:  # dead letters replayed left bytes too
                reply: Any = await scripts.rebuild_stream(
                    redis,
                    stream=stream,
                    scratch=keys.rebuild,
                    stats=keys.stats,
                    group="",
                    drop=drop,
                )
                counts[place] = int(reply[0])
        replayed = await later_entries(redis, keys, copies.stream_read_to, copies.ids)
        dropped, counted, unread = await scripts.rebuild_stream(
            redis,
            stream=keys.stream,
            scratch=keys.rebuild,
            stats=keys.stats,
            group=keys.group,
            drop=[*copies.stream, *replayed],
        )
    counts["stream"], counts["unprocessed"] = int(dropped), int(counted) + int(unread)
    with redis_errors("erase the memories and their keys"):
        removed = await _delete_per_write(redis, keys, ids)
        counts.update(removed)
        await _hdel(redis, keys.errors, [*copies.stream, *copies.dead_entry_ids])
        counts["held"] = await _hdel(redis, keys.held, ids)
        counts["access_counts"] = await _hdel(redis, keys.access_log, ids)
        counts["merge_log"] = await _hdel(redis, keys.merge_log, ids)
    with redis_errors("unlink the memories that stay"):
        counts["links"] = await _unlink(redis, keys, copies)
        counts["items"] = await _delete_items(redis, keys, copies)
        if copies.item_retired:
            await redis.srem(keys.item_retired, *copies.item_retired)
        counts["content_claims"] = await _delete_claims(redis, keys, copies)
        if ids:
            for chunk in _chunks(ids):
                await redis.sadd(keys.erased, *chunk)
    return counts


def _chunks(items: Sequence[str], size: int = BATCH) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def _delete_per_write(redis: Redis, keys: Keys, ids: Sequence[str]) -> dict[str, int]:
    """Delete each erased write's own keys (whether the scan saw them or they appeared
    since: a worker may have committed one meanwhile); how many of each kind existed."""
    kinds = ("outcomes", "idempotency_keys", "notify_lists", "refine_claims")
    counts = dict.fromkeys(("memories", *kinds), 0)
    for chunk in _chunks(ids):
        async with redis.pipeline(transaction=False) as pipe:
            for memory_id in chunk:
                pipe.delete(keys.doc(memory_id))
                for kind in kinds:
                    pipe.delete(per_write_key(keys, kind, memory_id))
            replies = await pipe.execute()
        width = 1 + len(kinds)
        for n, name in enumerate(("memories", *kinds)):
            counts[name] += sum(int(r) for r in replies[n::width])
    return counts


async def _hdel(redis: Redis, key: str, fields: Sequence[str]) -> int:
    removed = 0
    for chunk in _chunks(fields):
        removed += int(await redis.hdel(key, *chunk))
    return removed


async def _unlink(redis: Redis, keys: Keys, copies: Copies) -> int:
    """Unlink the memories that stay from the erased ones; how many changed."""
    erased = pack_for_script(sorted(copies.ids))
    changed = 0
    linked = sorted(copies.links)
    for start in range(0, len(linked), scripts.MEMORIES_PER_CALL):
        chunk = linked[start : start + scripts.MEMORIES_PER_CALL]
        changed += int(
            await scripts.unlink_erased(
                redis,
                merge_log=keys.merge_log,
                memories=[keys.doc(m) for m in chunk],
                ids=pack_for_script(chunk),
                erased=erased,
                sources=pack_for_script([sorted(copies.links[m]) for m in chunk]),
            )
        )
    return changed


async def _delete_items(redis: Redis, keys: Keys, copies: Copies) -> int:
    deleted = 0
    for name, path, key in copies.items:
        gone = await scripts.delete_item(
            redis,
            item=name,
            members=item_members_key(keys, path),
            paths=keys.item_paths,
            path=path,
            key=key,
        )
        deleted += gone is not None
    return deleted


async def _delete_claims(redis: Redis, keys: Keys, copies: Copies) -> int:
    """Delete the content claims naming an erased memory (the key is a digest of its text),
    those found and any a worker wrote since."""
    claims = {*copies.content_claims, *await claims_naming(redis, keys, copies.ids)}
    deleted = 0
    for chunk in _chunks(sorted(claims)):
        deleted += int(await redis.delete(*chunk))
    return deleted


async def _rewrite_persistence(redis: Redis, keys: Keys) -> tuple[str, ...]:
    """Ask for an AOF rewrite when the namespace's server appends to one, so the file stops
    holding the erased writes; what was asked (a server refusing ``CONFIG``: nothing)."""
    route = on_shard_of(redis, keys.stream)
    notes: list[str] = []
    with contextlib.suppress(HindsightError), redis_errors("ask for an AOF rewrite"):
        found: Any = await redis.execute_command("CONFIG", "GET", "appendonly", **route)  # type: ignore[no-untyped-call]
        values = [as_text(v) for v in (found.values() if isinstance(found, dict) else found)]
        if "yes" in values:
            reply = await redis.execute_command("BGREWRITEAOF", **route)  # type: ignore[no-untyped-call]
            notes.append(f"aof rewrite: {as_text(reply)}")
    return tuple(notes)


__all__ = ["PLACES", "ErasureReceipt", "Selector", "erase", "selector_of"]
