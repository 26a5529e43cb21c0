"""Where a namespace holds copies of the memories an erasure names: every kind of key, read.

``find_copies`` reads the namespace once (``SCAN`` of its keys, then each
kind in pipelined batches) and returns ``Copies``: which writes are erased
(``ids``: those the ``Selector`` matches anywhere, the ids asked for, and the
writes merged into an erased memory: near-duplicates of its text) and where
each of their copies is. Nothing is changed here; ``trust.erasure`` does it.

A write's copies: its memory hash (``Keys.doc``), its stream entry
(processed or not), its dead letter, its held write (``Keys.held``), its
outcome, idempotency, notify and refine-claim keys, its line in the drop log,
its access and merge counts, the content claim naming it, the keyed items
pointing at it, the conflict resolutions naming it, and the links of the
memories that stay (``conflicts_with``, ``resolved_with``, ``superseded_by``,
their last resolution, the sources of the erased writes merged into them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack
from redis.asyncio import Redis

from hindsight_redis.core.codec import EVENT_FIELD, decode_event
from hindsight_redis.core.documents import split_tags
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import PoisonMessage

BATCH = 500
"""Commands per pipelined round trip while reading."""
_DOC_FIELDS = (
    "agent_id",
    "session_id",
    "source",
    "sources",
    "tags",
    "conflicts_with",
    "resolved_with",
    "superseded_by",
    "resolution",
)


@dataclass(frozen=True, slots=True)
class Selector:
    """What an erasure erases: the writes with any of these ids, written by any of these
    agents, in any of these sessions, from any of these sources, or carrying any of
    these tags (the union)."""

    ids: frozenset[str] = frozenset()
    agent_ids: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    session_ids: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        """True when it names nothing."""
        return not (self.ids or self.agent_ids or self.tags or self.session_ids or self.sources)

    def matches(
        self,
        memory_id: str,
        *,
        agent_id: str = "",
        session_id: str = "",
        source: str = "",
        tags: Iterable[str] = (),
    ) -> bool:
        """Whether a write with these attributes is erased."""
        return (
            memory_id in self.ids
            or (bool(agent_id) and agent_id in self.agent_ids)
            or (bool(session_id) and session_id in self.session_ids)
            or (bool(source) and source in self.sources)
            or not self.tags.isdisjoint(tags)
        )

    def matches_event(self, event: MemoryEvent) -> bool:
        """Whether a write event is erased."""
        return self.matches(
            event.event_id,
            agent_id=event.agent_id,
            session_id=event.session_id,
            source=event.source,
            tags=event.tags,
        )

    def described(self) -> dict[str, list[str]]:
        """The criteria given, by name (``ids``, ``agent_id``, ``tag``, ``session_id``,
        ``source``), each sorted."""
        named = {
            "ids": self.ids,
            "agent_id": self.agent_ids,
            "tag": self.tags,
            "session_id": self.session_ids,
            "source": self.sources,
        }
        return {name: sorted(values) for name, values in named.items() if values}


@dataclass(slots=True)
class Copies:
    """What ``find_copies`` found: the erased ids and where their copies are."""

    ids: set[str] = field(default_factory=set)
    docs: set[str] = field(default_factory=set)
    """Memory ids with a hash (``Keys.doc``)."""
    stream: list[str] = field(default_factory=list)
    """Stream entry ids of erased writes."""
    stream_read_to: str = "0-0"
    """The last stream entry read (``later_entries`` reads the ones appended since)."""
    unprocessed: int = 0
    """Of ``stream``, those the workers have not processed (pending or never delivered)."""
    dead_letters: list[str] = field(default_factory=list)
    dead_entry_ids: list[str] = field(default_factory=list)
    """The stream entry ids the dead letters came from (their worker errors go too)."""
    held: set[str] = field(default_factory=set)
    keys_by_kind: dict[str, set[str]] = field(default_factory=dict)
    """Per-write keys found: ``outcomes``, ``idempotency_keys``, ``notify_lists``,
    ``refine_claims`` -> memory ids."""
    drop_log: list[str] = field(default_factory=list)
    resolutions: list[str] = field(default_factory=list)
    access_counts: set[str] = field(default_factory=set)
    merge_log: set[str] = field(default_factory=set)
    links: dict[str, set[str]] = field(default_factory=dict)
    """Memories that stay -> the sources to drop from them (links to erased ids go anyway)."""
    items: list[tuple[str, str, str]] = field(default_factory=list)
    """Keyed items pointing at erased memories: (item key, path JSON, key)."""
    item_retired: set[str] = field(default_factory=set)
    content_claims: list[str] = field(default_factory=list)
    """Content-claim keys naming an erased memory."""


@dataclass(slots=True)
class _Scan:
    """The namespace's keys, by kind."""

    docs: set[str] = field(default_factory=set)
    per_write: dict[str, set[str]] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)


_PER_WRITE = {
    "outcome": "outcomes",
    "idem": "idempotency_keys",
    "notify": "notify_lists",
    "refining": "refine_claims",
}


def per_write_key(keys: Keys, kind: str, memory_id: str) -> str:
    """The key of one write's ``kind`` (a ``Copies.keys_by_kind`` name)."""
    make = {
        "outcomes": keys.outcome,
        "idempotency_keys": keys.idempotency,
        "notify_lists": keys.notify,
        "refine_claims": keys.refine_claim,
    }
    return make[kind](memory_id)


def item_members_key(keys: Keys, path_text: str) -> str:
    """The key set of an item's path, from the path's stored JSON: ``items.path_digest``'s
    digest (``client.items``, a room above; a test holds the two equal)."""
    digest = hashlib.sha256(path_text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return keys.items_of(digest)


async def _scan(redis: Redis, keys: Keys) -> _Scan:
    found = _Scan(per_write={kind: set() for kind in _PER_WRITE.values()})
    base = keys.base + ":"
    async for raw in redis.scan_iter(match=keys.pattern, count=1000):
        name = as_text(raw)
        if name.startswith(keys.doc_prefix):
            found.docs.add(name.removeprefix(keys.doc_prefix))
            continue
        kind, _, rest = name.removeprefix(base).partition(":")
        if kind in _PER_WRITE and rest:
            found.per_write[_PER_WRITE[kind]].add(rest)
        elif kind == "item" and rest:
            found.items.append(name)
        elif kind == "content" and rest:
            found.claims.append(name)
    return found


def _chunks(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def _entries(redis: Redis, stream: str) -> list[tuple[str, dict[bytes, bytes]]]:
    """Every entry of ``stream``, oldest first (pages of ``BATCH``)."""
    found: list[tuple[str, dict[bytes, bytes]]] = []
    low = "-"
    while True:
        page: Any = await redis.xrange(stream, min=low, max="+", count=BATCH)
        found += [(as_text(i), dict(f or {})) for i, f in page or []]
        if len(page or []) < BATCH:
            return found
        low = "(" + as_text(page[-1][0])


def _event(fields: Mapping[bytes, bytes]) -> MemoryEvent | None:
    try:
        return decode_event(fields)
    except PoisonMessage:
        return None  # unreadable: no erasure can say whose it is


def _held_event(raw: Any) -> MemoryEvent | None:
    """The event of a held write (``Keys.held``: msgpack map, ``event`` its encoded event)."""
    try:
        held = msgpack.unpackb(raw, raw=False)
    except (ValueError, msgpack.UnpackException):
        return None
    event = held.get("event") if isinstance(held, dict) else None
    return _event({EVENT_FIELD: event}) if isinstance(event, bytes) else None


async def find_copies(redis: Redis, keys: Keys, selector: Selector) -> Copies:
    """Every copy of the writes ``selector`` names (see the module doc); reads only."""
    scan = await _scan(redis, keys)
    copies = Copies(ids=set(selector.ids))
    docs = await _read_docs(redis, keys, sorted(scan.docs))
    for memory_id, doc in docs.items():
        if selector.matches(memory_id, tags=split_tags(doc["tags"]), **_who(doc)):
            copies.ids.add(memory_id)
    stream = await _entries(redis, keys.stream)
    letters = await _entries(redis, keys.dead_letters)
    events = [(i, _event(f)) for i, f in stream]
    dead = [(i, as_text(f.get(b"entry_id")), _event(f)) for i, f in letters]
    held: Any = await redis.hgetall(keys.held)
    held_events = {as_text(k): _held_event(v) for k, v in held.items()}
    outcomes = await _read_outcomes(redis, keys, sorted(scan.per_write["outcomes"]))
    drops = [(as_text(i), _json(f.get(b"o"))) for i, f in await _entries(redis, keys.recent_drops)]
    for event in _events_of(events, dead, held_events):
        if selector.matches_event(event):
            copies.ids.add(event.event_id)
    for memory_id, outcome in list(outcomes.items()) + [(o.get("id", ""), o) for _, o in drops]:
        if memory_id and selector.matches(
            memory_id, tags=outcome.get("tags") or (), **_who(outcome)
        ):
            copies.ids.add(str(memory_id))
    # A write merged into an erased memory is a near-duplicate of its text: erased too.
    erased_docs = copies.ids & set(docs)
    for memory_id, outcome in outcomes.items():
        if outcome.get("merged_into") in erased_docs:
            copies.ids.add(memory_id)
    ids = copies.ids
    copies.docs = ids & set(docs)
    copies.stream = [i for i, e in events if e is not None and e.event_id in ids]
    copies.stream_read_to = stream[-1][0] if stream else "0-0"
    copies.unprocessed = await _unprocessed(redis, keys, copies.stream)
    copies.dead_letters = [i for i, _, e in dead if e is not None and e.event_id in ids]
    copies.dead_entry_ids = [j for _, j, e in dead if e is not None and e.event_id in ids and j]
    copies.held = {memory_id for memory_id in held_events if memory_id in ids}
    copies.keys_by_kind = {kind: found & ids for kind, found in scan.per_write.items()}
    # Drop-log lines written before they carried the write's id and tags: by writer,
    # session, source, or the text of an erased write.
    gone_texts = {str(o.get("content")) for i, o in outcomes.items() if i in ids}
    gone_texts |= {e.content for e in _events_of(events, dead, held_events) if e.event_id in ids}
    copies.drop_log = [
        entry_id
        for entry_id, outcome in drops
        if outcome.get("id") in ids
        or (
            "id" not in outcome
            and (selector.matches("", **_who(outcome)) or str(outcome.get("content")) in gone_texts)
        )
    ]
    copies.resolutions = await _resolutions_naming(redis, keys, ids)
    await _counts_and_links(redis, keys, copies, docs, outcomes, selector)
    await _items(redis, keys, copies, scan)
    return copies


def _events_of(
    events: Sequence[tuple[str, MemoryEvent | None]],
    dead: Sequence[tuple[str, str, MemoryEvent | None]],
    held: Mapping[str, MemoryEvent | None],
) -> Iterator[MemoryEvent]:
    """The readable events of the stream, the dead letters and the held writes."""
    for event in [e for _, e in events] + [e for _, _, e in dead] + list(held.values()):
        if event is not None:
            yield event


def _who(fields: Mapping[str, Any]) -> dict[str, str]:
    return {name: str(fields.get(name) or "") for name in ("agent_id", "session_id", "source")}


def _json(raw: Any) -> dict[str, Any]:
    try:
        found = json.loads(raw) if raw is not None else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


async def _read_docs(redis: Redis, keys: Keys, ids: Sequence[str]) -> dict[str, dict[str, str]]:
    """The linking and matching fields of every memory hash, by id."""
    docs: dict[str, dict[str, str]] = {}
    for chunk in _chunks(ids):
        async with redis.pipeline(transaction=False) as pipe:
            for memory_id in chunk:
                pipe.hmget(keys.doc(memory_id), list(_DOC_FIELDS))
            rows = await pipe.execute()
        for memory_id, row in zip(chunk, rows, strict=True):
            if any(v is not None for v in row):  # else deleted since the scan
                docs[memory_id] = {n: as_text(v) for n, v in zip(_DOC_FIELDS, row, strict=True)}
    return docs


async def _read_outcomes(redis: Redis, keys: Keys, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    outcomes: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        values: Any = await redis.mget([keys.outcome(i) for i in chunk])
        for memory_id, raw in zip(chunk, values, strict=True):
            if raw is not None:
                outcomes[memory_id] = _json(raw)
    return outcomes


async def _unprocessed(redis: Redis, keys: Keys, entry_ids: Sequence[str]) -> int:
    """How many of ``entry_ids`` the workers have not processed: pending, or not delivered."""
    if not entry_ids:
        return 0
    groups: Any = await redis.xinfo_groups(keys.stream)
    ours = next((g for g in groups if as_text(g["name"]) == keys.group), None)
    if ours is None:
        return len(entry_ids)
    last = _id(as_text(ours["last-delivered-id"]))
    pending: set[str] = set()
    if int(ours["pending"]):
        rows: Any = await redis.xpending_range(
            keys.stream, keys.group, min="-", max="+", count=int(ours["pending"])
        )
        pending = {as_text(r["message_id"]) for r in rows}
    return sum(1 for i in entry_ids if i in pending or _id(i) > last)


def _id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms or 0), int(seq or 0)


async def _resolutions_naming(redis: Redis, keys: Keys, ids: set[str]) -> list[str]:
    """The entries of the resolutions log about an erased memory (their notes may quote it)."""
    return [
        entry_id
        for entry_id, fields in await _entries(redis, keys.resolutions)
        if as_text(fields.get(b"memory")) in ids or as_text(fields.get(b"other")) in ids
    ]


def _mentions(resolution: str, ids: set[str]) -> bool:
    found = _json(resolution) if resolution else {}
    named = {str(found.get("other", "")), str(found.get("archived", ""))}
    named |= set(split_tags(str(found.get("kept", ""))))
    return not named.isdisjoint(ids)


async def _counts_and_links(
    redis: Redis,
    keys: Keys,
    copies: Copies,
    docs: Mapping[str, Mapping[str, str]],
    outcomes: Mapping[str, Mapping[str, Any]],
    selector: Selector,
) -> None:
    """The access and merge counts of the erased memories, and the memories that stay
    linked to them (with the sources to drop from each)."""
    ids = copies.ids
    counted: Any = await redis.hgetall(keys.access_log)
    copies.access_counts = {as_text(k) for k in counted} & ids
    merges: Any = await redis.hgetall(keys.merge_log)
    pending = {as_text(k): split_tags(as_text(v)) for k, v in merges.items()}
    copies.merge_log = set(pending) & ids
    drop: dict[str, set[str]] = {}
    for memory_id, outcome in outcomes.items():  # erased writes merged into one that stays
        into, source = str(outcome.get("merged_into") or ""), str(outcome.get("source") or "")
        if memory_id in ids and into and into not in ids and source:
            drop.setdefault(into, set()).add(source)
    for memory_id, doc in docs.items():
        if memory_id in ids:
            continue
        linked = (
            not ids.isdisjoint(split_tags(doc["conflicts_with"]))
            or not ids.isdisjoint(split_tags(doc["resolved_with"]))
            or doc["superseded_by"] in ids
            or _mentions(doc["resolution"], ids)
        )
        sources = {*split_tags(doc["sources"]), *pending.get(memory_id, ())}
        named = (sources & selector.sources) - {doc["source"]}
        if named:
            drop.setdefault(memory_id, set()).update(named)
        if linked or memory_id in drop:
            copies.links[memory_id] = drop.get(memory_id, set())
    retired: Any = await redis.smembers(keys.item_retired)
    copies.item_retired = {as_text(m) for m in retired} & ids


async def later_entries(redis: Redis, keys: Keys, after: str, ids: set[str]) -> list[str]:
    """Entries of erased writes appended after ``after``: a dead letter replayed meanwhile
    (``dlq replay`` puts it back under a new entry id)."""
    later: Any = await redis.xrange(keys.stream, min="(" + after, max="+")
    found = [(as_text(i), _event(dict(f or {}))) for i, f in later or []]
    return [i for i, e in found if e is not None and e.event_id in ids]


async def claims_naming(redis: Redis, keys: Keys, ids: set[str]) -> list[str]:
    """The content-claim keys naming one of ``ids`` (a worker may have written one since the
    copies were found)."""
    names = [as_text(k) async for k in redis.scan_iter(match=keys.pattern_of("content"))]
    found = []
    for chunk in _chunks(names):
        holders: Any = await redis.mget(list(chunk))
        found += [name for name, h in zip(chunk, holders, strict=True) if as_text(h) in ids]
    return found


async def _items(redis: Redis, keys: Keys, copies: Copies, scan: _Scan) -> None:
    """The keyed items pointing at erased memories, and the content claims naming them."""
    for chunk in _chunks(scan.items):
        async with redis.pipeline(transaction=False) as pipe:
            for name in chunk:
                pipe.hmget(name, ["memory_id", "path", "key"])
            rows = await pipe.execute()
        for name, (memory_id, path, key) in zip(chunk, rows, strict=True):
            if memory_id is not None and as_text(memory_id) in copies.ids:
                copies.items.append((name, as_text(path), as_text(key)))
    for chunk in _chunks(scan.claims):
        holders: Any = await redis.mget(list(chunk))
        copies.content_claims += [
            name for name, h in zip(chunk, holders, strict=True) if as_text(h) in copies.ids
        ]
