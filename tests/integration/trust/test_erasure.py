"""Erasure on a real Redis: every copy of one user's writes goes, byte for byte.

One user's memories in every state a write can be in (indexed, merged,
dropped, dead-lettered, held, pending in a worker's hands, never delivered,
exported, linked to another's memory by a conflict resolution, under a keyed
item, counted by searches) are erased by tag; then every key of the namespace,
streams included, is ``DUMP``-ed (compression off, so bytes are bytes) and
none holds a byte of that user's text, while the other user's memories are
still found.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgpack
import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.client.items import ItemStore
from hindsight_redis.core.codec import encode_event, encode_outcome
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.errors import InvalidArgument, InvalidMemory
from tests.integration.helpers import Drain, FailOn, Gate, wait_for

ALICE = "user:alice"
KEPT = "Alice Quimby keeps her passport XQ-77341 in the blue drawer of the Lyon flat"
TWIN = "Alice Quimby keeps her passport XQ-77341 in the blue drawer of the Lyon flat."
RESOLVED = "Alice Quimby's dentist appointment moved to the Zorvath clinic on Friday"
DROPPED = "ok thanks!!"
POISON = "Alice Quimby asked to fail the Krellwyn pipeline on purpose"
HELD = "Alice Quimby's AWS key is AKIAQUIMBYHELD0000 for the Brastow account"
PENDING = "Alice Quimby will fly to Osaka on the Merrowind flight next Tuesday"
QUEUED = "Alice Quimby's daughter Pellaria starts at the Vintry school in September"
ITEM = {"note": "Alice Quimby prefers the Tamsworth mug"}
ALICE_TEXTS = (KEPT, TWIN, RESOLVED, DROPPED, POISON, HELD, PENDING, QUEUED, ITEM["note"], "Quimby")
BOB = "Bob Ferreira deploys the billing service from the Harrowgate runner"
BOB_TOO = "Bob Ferreira's standup moved to room Caldera at 10:30 on Thursdays"


@asynccontextmanager
async def uncompressed(redis: Redis) -> AsyncIterator[None]:
    """``DUMP`` shows strings as they are (not LZF-compressed) inside the block."""
    before = (await redis.config_get("rdbcompression"))["rdbcompression"]
    await redis.config_set("rdbcompression", "no")
    try:
        yield
    finally:
        await redis.config_set("rdbcompression", before)


async def dumps(redis: Redis, prefix: str) -> dict[bytes, bytes]:
    """Every key of the test's prefix with its ``DUMP`` (streams, hashes, lists, sets...)."""
    found = {}
    async for key in redis.scan_iter(match=f"{prefix}:*", count=1000):
        dumped = await redis.dump(key)
        if dumped is not None:
            found[key] = dumped
    return found


def holding(dumped: dict[bytes, bytes], texts: tuple[str, ...]) -> list[str]:
    """``key: text`` for each key whose name or value holds one of ``texts``."""
    return [
        f"{key.decode()}: {text}"
        for key, value in dumped.items()
        for text in texts
        if text.encode() in value or text.encode() in key
    ]


async def _held(redis: Redis, keys: Keys, namespace: str) -> str:
    """A write held for review, as the held store keeps one (the shared contract's format)."""
    event = MemoryEvent(
        event_id="heldalice0000000000000000000001",
        namespace=namespace,
        content=HELD,
        agent_id="alice-bot",
        tags=(ALICE,),
        created_at=time.time(),
        hold="secret:aws-key",
    )
    entry = {"event": encode_event(event), "reason": "secret:aws-key", "state": "held"}
    await redis.hset(keys.held, event.event_id, msgpack.packb({**entry, "at": 1.0, "by": ""}))
    outcome = encode_outcome({"status": "held", "reason": "secret:aws-key"})
    await redis.set(keys.outcome(event.event_id), outcome)
    return event.event_id


async def test_erasing_a_tag_leaves_no_byte_of_it_and_keeps_the_others(
    client: AsyncMemoryClient, settings: Settings, drain: Drain, redis: Redis, tmp_path: Path
) -> None:
    keys = client.keys
    alice = {"tags": [ALICE], "agent_id": "alice-bot", "session_id": "s-alice"}
    bob = {"tags": ["user:bob"], "agent_id": "bob-bot", "session_id": "s-bob"}
    kept = await client.write(KEPT, idempotency_key="alice-passport", **alice)
    resolved = await client.write(RESOLVED, **alice)
    bobs = await client.write_many([{"content": BOB, **bob}, {"content": BOB_TOO, **bob}])
    dropped = await client.write(DROPPED, **alice)
    poison = await client.write(POISON, **alice)
    refuse = InvalidMemory("refused by the test")  # not retryable: dead-lettered at once
    await drain(extra_stages=[FailOn("Krellwyn", refuse)])
    twin = await client.write(TWIN, **alice)
    await drain()
    assert (await client.get(twin.id)).status == "merged"  # type: ignore[union-attr]
    assert (await client.get(dropped.id)).status == "dropped"  # type: ignore[union-attr]
    assert [d.memory_id for d in await client.dead_letters()] == [poison.id]
    # A conflict between alice's memory and bob's, resolved with a note quoting her.
    for mine, theirs in ((resolved.id, bobs[1].id), (bobs[1].id, resolved.id)):
        await redis.hset(keys.doc(mine), mapping={"conflicts_with": theirs, "review": "conflict"})
    await client.resolve_conflict(resolved.id, "both", note="Zorvath clinic is right for Quimby")
    store = ItemStore(redis, keys)
    await store.put(
        ("prefs", "alice"),
        "mug",
        json.dumps(ITEM).encode(),
        memory_id=kept.id,
        content_sha="x",
        now=time.time(),
    )
    exported = tmp_path / "hot.jsonl.gz"
    await client.export(exported, status="active")
    assert [h.id for h in await client.search("Quimby passport drawer", top_k=3)][:1] == [kept.id]

    async def counted() -> bool:  # the search's hit counts are sent in the background
        return bool(await redis.hexists(keys.access_log, kept.id))

    await wait_for(counted)
    held = await _held(redis, keys, settings.namespace)
    pending = await client.write(PENDING, **alice)
    queued = await client.write(QUEUED, **alice)
    # A worker took the pending one and died; the queued one no worker has seen.
    await redis.xreadgroup(keys.group, "crashed", {keys.stream: ">"}, count=1)

    before = await client.stats()
    async with uncompressed(redis):
        assert holding(await dumps(redis, settings.key_prefix), ALICE_TEXTS)  # they are there
        snapshot = await dumps(redis, settings.key_prefix)
        preview = await client.erase(tag=ALICE, dry_run=True)
        assert await dumps(redis, settings.key_prefix) == snapshot  # a dry run changes nothing
        receipt = await client.erase(tag=ALICE, as_agent="dpo")
        left = await dumps(redis, settings.key_prefix)
    assert holding(left, ALICE_TEXTS) == []

    erased = {kept.id, resolved.id, dropped.id, poison.id, twin.id, held, pending.id, queued.id}
    assert set(receipt.ids) == erased and receipt.digest and receipt.by == "dpo"
    assert preview.dry_run and not receipt.dry_run and preview.ids == receipt.ids
    counts = receipt.erased
    assert counts["memories"] == 2  # kept and resolved
    assert (counts["stream"], counts["unprocessed"]) == (2, 2)  # pending and queued
    assert (counts["dead_letters"], counts["held"], counts["items"]) == (1, 1, 1)
    # dropped, twin (merged) and the held one: an indexed write's memory is its record
    assert counts["outcomes"] == 3
    assert counts["idempotency_keys"] == 1 and counts["drop_log"] == 1
    assert counts["resolutions"] == 1 and counts["links"] == 1  # bob's memory, unlinked
    assert counts["content_claims"] == 2 and counts["access_counts"] >= 1  # searched
    assert preview.erased == counts
    assert [(e.path, e.holding) for e in receipt.exports] == [(str(exported.resolve()), 2)]
    assert receipt.audit_id and not preview.audit_id

    # bob's memories stay, found, unlinked from alice's; alice's are gone everywhere.
    hits = await client.search("Bob Ferreira standup billing", top_k=5)
    assert {h.id for h in hits} == {b.id for b in bobs}
    unlinked = await client.get(bobs[1].id)
    assert unlinked is not None and unlinked.resolved_with == () and unlinked.resolution is None
    for memory_id in erased:
        assert await client.get(memory_id) is None
    assert await client.search("Quimby passport Osaka", mode="keyword") == []
    assert not {h.id for h in await client.search("Quimby passport Osaka", top_k=10)} & erased
    assert await store.get(("prefs", "alice"), "mug") is None
    assert await store.paths() == {}
    stats = await client.stats()
    assert stats["backlog"] == 0 and stats["pending"] == 0  # the erased writes count as done
    assert before["backlog"] == 2 and stats["accepted"] == before["accepted"] - 1  # queued
    # An import of the older export brings nothing of her back.
    imported = await client.import_file(exported)
    assert (imported.imported, imported.erased) == (0, 2)
    trail = await client.audit(action="erase")
    assert [(e.by, e.how, e.count, e.digest) for e in trail] == [
        ("dpo", "argument", len(erased), receipt.digest)
    ]
    assert "Quimby" not in json.dumps([e.details for e in await client.audit()])
    # Writing again under the same idempotency key is a new write, not the erased one's.
    again = await client.write("Alice Q. has a new passport", idempotency_key="alice-passport")
    assert not again.duplicate


async def test_an_entry_in_a_workers_hands_when_erased_is_never_indexed(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    gate = Gate()
    worker = Worker(settings, name="holder", extra_stages=[gate])
    import asyncio

    task = asyncio.create_task(worker.run_async())
    try:
        held = await client.write(PENDING, tags=[ALICE])
        await asyncio.wait_for(gate.in_flight.wait(), 20)
        receipt = await client.erase(held.id)
        assert receipt.erased["stream"] == 1 and receipt.erased["unprocessed"] == 1
        gate.release.set()

        async def settled() -> bool:
            return (await client.stats())["pending"] == 0

        await wait_for(settled)
        other = await client.write(BOB, wait=True, timeout_s=20)
        assert other.status == "indexed"  # the worker went on
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
    assert await client.get(held.id) is None
    assert not await client.redis.exists(client.keys.doc(held.id))
    stats = await client.stats()
    assert stats["backlog"] == 0 and stats["indexed"] == 1


async def test_a_reclaimed_erased_entry_is_acknowledged_and_never_indexed(
    client: AsyncMemoryClient, settings: Settings, drain: Drain, redis: Redis
) -> None:
    keys = client.keys
    erased = await client.write(PENDING, tags=[ALICE])
    kept = await client.write(BOB)
    await redis.xgroup_create(keys.stream, keys.group, id="0")
    await redis.xreadgroup(keys.group, "crashed", {keys.stream: ">"}, count=2)
    await client.erase(tag=ALICE)
    # The crashed consumer's entries are reclaimed after claim_idle_ms: only bob's is left.
    report = await drain()
    assert (report.indexed, report.dead_lettered) == (1, 0)
    assert await client.get(erased.id) is None and await client.get(kept.id) is not None
    assert (await client.stats())["backlog"] == 0
    assert await redis.xlen(keys.dead_letters) == 0


async def test_selectors_are_a_union_and_must_name_something(client: AsyncMemoryClient) -> None:
    with pytest.raises(InvalidArgument, match="needs ids"):
        await client.erase()
    with pytest.raises(InvalidArgument, match="tag"):
        await client.erase(tag="")
    with pytest.raises(InvalidArgument, match="invalid memory id"):
        await client.erase(["a:b"])
    first = await client.write("Carla Mendes ships the Ostrava release", agent_id="carla")
    second = await client.write("Dmitri Volk owns the Tessel migration", session_id="s-d")
    third = await client.write("Erin Pike reviews the Quarry dashboards", source="chat:erin")
    receipt = await client.erase(agent_id="carla", session_id=["s-d"], dry_run=True)
    assert set(receipt.ids) == {first.id, second.id}
    assert receipt.selector == {"agent_id": ["carla"], "session_id": ["s-d"]}
    by_source = await client.erase(source="chat:erin")
    assert by_source.ids == (third.id,) and by_source.erased["stream"] == 1
    assert by_source.erased["unprocessed"] == 1
    assert (await client.stats())["accepted"] == 2  # as if never written (no worker saw it)


async def test_a_dead_letter_replayed_while_erasing_is_erased_too(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    from hindsight_redis.trust.copies import find_copies
    from hindsight_redis.trust.erasure import _remove, selector_of

    poison = await client.write(POISON, tags=[ALICE])
    await drain(extra_stages=[FailOn("Krellwyn", InvalidMemory("refused by the test"))])
    copies = await find_copies(redis, client.keys, selector_of(tag=ALICE))
    assert copies.dead_letters and not copies.stream
    assert len(await client.replay_dead_letters()) == 1  # between the find and the removal
    counts = await _remove(redis, client.keys, copies)
    assert (counts["dead_letters"], counts["stream"], counts["unprocessed"]) == (0, 1, 1)
    report = await drain()
    assert (report.indexed, report.dead_lettered) == (0, 0)
    assert await client.get(poison.id) is None
    assert (await client.stats())["backlog"] == 0


async def test_erasing_a_session_erases_its_conversation(client: AsyncMemoryClient) -> None:
    from hindsight_redis.client.conversation import Conversation

    said = {"role": "user", "content": "Alice Quimby's new address is 4 Orrin Lane"}
    mine, other = Conversation(client, "s-alice"), Conversation(client, "s-bob")
    await mine.add([said])
    await other.add([{"role": "user", "content": "Bob's order is late"}])
    written = await client.write(str(said["content"]), session_id="s-alice")
    looked = await client.erase(session_id="s-alice", dry_run=True)
    assert looked.erased["conversations"] == 1 and await mine.items() == [said]
    receipt = await client.erase(session_id=["s-alice", "s-none"])
    assert receipt.ids == (written.id,) and receipt.erased["conversations"] == 1
    assert await mine.items() == [] and len(await other.items()) == 1
