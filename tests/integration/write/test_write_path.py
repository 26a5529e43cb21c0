"""The write path and workers against the real embedded Redis."""

from __future__ import annotations

import asyncio
import json

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Backpressure, InvalidMemory, Settings, Worker
from hindsight_redis.core.codec import EVENT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.pipeline.assembly import shared_parts
from hindsight_redis.pipeline.consumer import FOLD_WHILE_BUSY_S
from hindsight_redis.write import writer as writer_module
from hindsight_redis.write.backlog import backlog
from tests.integration.helpers import Drain, FailOn, Slow, hash_writes, wait_for

FACT = (
    "The billing-service-v2 deploy on 2026-03-02 failed with ERR_CONN_RESET, rolled back by Alice"
)
OTHER = "Bob prefers answers in Chinese and wants weekly summaries every Friday at 9am"
THIRD = "The staging Postgres cluster moved to eu-west-1 on March 14; credentials rotate monthly"


async def _doc_ids(client: AsyncMemoryClient) -> list[str]:
    ids = []
    async for key in client.redis.scan_iter(match=f"{client.keys.doc_prefix}*", count=1000):
        ids.append(key.decode().removeprefix(client.keys.doc_prefix))
    return ids


async def test_write_returns_at_once_and_a_worker_indexes_it(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    receipt = await client.write(FACT, agent_id="planner", session_id="s-42", tags=["ops"])
    assert receipt.status == "accepted" and receipt.stream_id
    assert await client.get(receipt.id) is None  # not processed yet: nothing stored
    report = await drain()
    assert report.indexed == 1
    record = await client.get(receipt.id)
    assert record is not None and record.status == "active"
    assert record.content == FACT and record.agent_id == "planner" and record.tags == ("ops",)
    assert record.embedding_dims > 0


async def test_write_many_is_one_command_and_keeps_order(
    client: AsyncMemoryClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await client.write_many([{"content": "warm-up: loads the write script once"}])
    commands: list[object] = []
    real = client.redis.execute_command

    async def counting(*args: object, **kwargs: object) -> object:
        commands.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(client.redis, "execute_command", counting)
    items = [{"content": f"{FACT} (copy {n})", "source": f"chat#{n}"} for n in range(50)]
    receipts = await client.write_many(items)
    assert commands == ["EVALSHA"]  # the whole batch in one command, one round trip
    assert len(receipts) == 50 and len({r.id for r in receipts}) == 50
    stream_ids = [r.stream_id for r in receipts]
    assert stream_ids == sorted(stream_ids, key=lambda s: tuple(map(int, s.split("-"))))
    assert (await client.stats())["accepted"] == 51


async def test_a_batch_mixing_new_and_retried_writes(client: AsyncMemoryClient) -> None:
    first = await client.write(FACT, idempotency_key="k1")
    receipts = await client.write_many(
        [
            {"content": OTHER, "idempotency_key": "k2"},
            {"content": FACT, "idempotency_key": "k1"},
        ]
    )
    assert not receipts[0].duplicate and receipts[1].duplicate
    assert receipts[1].stream_id == first.stream_id
    assert (await client.stats())["accepted"] == 2


async def test_invalid_writes_get_clear_errors_and_nothing_is_queued(
    client: AsyncMemoryClient, settings: Settings
) -> None:
    with pytest.raises(InvalidMemory, match="content must not be empty"):
        await client.write("   ")
    with pytest.raises(TypeError, match="colour"):  # write() has explicit, typed arguments
        await client.write(FACT, colour="red")  # type: ignore[call-arg]
    with pytest.raises(InvalidMemory, match="unknown field"):  # dicts are checked by name
        await client.write_many([{"content": FACT, "colour": "red"}])
    with pytest.raises(InvalidMemory, match="tags must be a list"):
        await client.write(FACT, tags="ops")
    with pytest.raises(InvalidMemory, match="item 1"):
        await client.write_many([{"content": FACT}, {"content": ""}])
    with pytest.raises(InvalidMemory, match="limit"):
        await client.write("x" * (settings.max_content_chars + 1))
    assert (await client.stats())["accepted"] == 0


async def test_idempotent_retry_returns_first_receipt_and_indexes_once(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    first = await client.write(FACT, idempotency_key="msg-7")
    again = await client.write(FACT, idempotency_key="msg-7")
    assert (again.id, again.stream_id) == (first.id, first.stream_id)
    assert again.duplicate and not first.duplicate
    await drain()
    third = await client.write(FACT, idempotency_key="msg-7")
    assert third.id == first.id and third.duplicate
    stats = await client.stats()
    assert stats["accepted"] == 1 and stats["indexed"] == 1
    assert await _doc_ids(client) == [first.id]


async def test_backpressure_rejects_writes_over_the_backlog_limit(
    settings: Settings, drain: Drain
) -> None:
    tight = settings.model_copy(update={"max_backlog": 5})
    async with AsyncMemoryClient(tight) as client:
        await client.write_many([{"content": f"{FACT} #{n}"} for n in range(5)])
        with pytest.raises(Backpressure, match="5 unprocessed") as info:
            await client.write(FACT + " one too many")
        assert info.value.retryable
        with pytest.raises(Backpressure):  # a batch is accepted whole or not at all
            await client.write_many([{"content": OTHER}, {"content": THIRD}])
        await drain(tight)
        receipt = await client.write(FACT + " after draining")  # room again
        assert receipt.status == "accepted"
        assert (await client.stats())["accepted"] == 6  # the rejected write was never queued


async def test_backpressure_block_mode_waits_for_room(
    settings: Settings, drain: Drain, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocking = settings.model_copy(
        update={"max_backlog": 3, "backpressure": "block", "backpressure_timeout_s": 20.0}
    )
    looked: list[int] = []  # the backlog each time the write gate read it

    async def read_backlog(redis: Redis, keys: Keys) -> int:
        looked.append(await backlog(redis, keys))
        return looked[-1]

    monkeypatch.setattr(writer_module, "backlog", read_backlog)

    async def paused_for_room() -> bool:
        return len(looked) >= 2  # found no room, paused, and looked again

    async with AsyncMemoryClient(blocking) as client:
        await client.write_many([{"content": f"{FACT} #{n}"} for n in range(3)])
        writer = asyncio.create_task(client.write(FACT + " waits"))
        await wait_for(paused_for_room)
        assert not writer.done() and set(looked) == {3}
        await drain(blocking)
        receipt = await asyncio.wait_for(writer, 10)
        assert receipt.status == "accepted"


async def test_poison_entry_is_dead_lettered_and_the_stream_keeps_flowing(
    client: AsyncMemoryClient,
    drain: Drain,
) -> None:
    await client.write(FACT + " before")
    await client.redis.xadd(client.keys.stream, {EVENT_FIELD: b"\xc1 not msgpack"})
    await client.write(THIRD)
    report = await drain()
    assert report.indexed == 2 and report.dead_lettered == 1
    letters = await client.dead_letters()
    assert len(letters) == 1 and "PoisonMessage" in letters[0].error
    stats = await client.stats()
    assert stats["dead_letters"] == 1 and stats["backlog"] == 0 and stats["pending"] == 0


async def test_failing_entry_is_retried_then_dead_lettered_and_replayable(
    settings: Settings,
    drain: Drain,
) -> None:
    fast = settings.model_copy(update={"max_deliveries": 3, "claim_idle_ms": 50})
    async with AsyncMemoryClient(fast) as client:
        bad = await client.write(FACT + " POISON")
        good = await client.write(OTHER)
        stage = FailOn("POISON")
        report = await drain(fast, extra_stages=[stage])
        assert report.indexed == 1 and report.dead_lettered == 1 and report.failed == 3
        letters = await client.dead_letters()
        assert [dl.memory_id for dl in letters] == [bad.id]
        assert "RuntimeError: boom" in letters[0].error and letters[0].deliveries == 3
        assert (await client.get(good.id)) is not None
        # fix the cause, replay: the write is indexed and the dead-letter stream is empty
        assert len(await client.replay_dead_letters()) == 1
        report = await drain(fast)
        assert report.indexed == 1
        record = await client.get(bad.id)
        assert record is not None and record.status == "active"
        assert (await client.stats())["dead_letters"] == 0


async def test_non_retryable_error_dead_letters_at_once(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    await client.write(FACT + " INVALID")
    stage = FailOn("INVALID", InvalidMemory("cannot be stored"))
    report = await drain(extra_stages=[stage])
    assert report.dead_lettered == 1 and report.failed == 1


async def test_wait_true_returns_once_searchable(client: AsyncMemoryClient, worker: Worker) -> None:
    receipt = await client.write(FACT, wait=True, timeout_s=20)
    assert receipt.status == "indexed" and receipt.scored_by  # the whole outcome, notified
    hits = await client.search("ERR_CONN_RESET", mode="keyword")
    assert receipt.id in [h.id for h in hits]


async def test_an_indexed_write_is_recorded_by_its_memory_alone(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    first = await client.write(FACT, idempotency_key="k-rec")
    await drain()
    assert await client.redis.exists(client.keys.outcome(first.id)) == 0  # no outcome key
    # A waiter after the fact, or a retry's (no notification of their own), learn it from
    # the memory.
    waited = await client._writer.wait_outcome(client.redis, first, 5)
    assert waited.status == "indexed" and waited.id == first.id
    again = await client.write(FACT, idempotency_key="k-rec", wait=True, timeout_s=5)
    assert again.duplicate and again.status == "indexed" and again.id == first.id
    assert (await client.stats())["indexed"] == 1


async def test_wait_zero_looks_once_and_does_not_wait_the_default(
    client: AsyncMemoryClient,
) -> None:
    import time

    from hindsight_redis import WriteTimeout

    started = time.monotonic()
    with pytest.raises(WriteTimeout, match=r"within 0\.0s"):  # no worker runs
        await client.write(FACT, wait=True, timeout_s=0)
    assert time.monotonic() - started < 5  # not write_wait_timeout_s (30 s)
    with pytest.raises(InvalidMemory, match="timeout_s"):
        await client.write(FACT, wait=True, timeout_s=-1)
    with pytest.raises(InvalidMemory, match="timeout_s"):
        await client.write(FACT, wait=True, timeout_s="5")  # type: ignore[arg-type]
    assert (await client.stats())["accepted"] == 1  # only the valid one was queued


async def test_wait_true_reports_the_drop_reason(client: AsyncMemoryClient, worker: Worker) -> None:
    receipt = await client.write("ok thanks!", wait=True, timeout_s=20)
    assert receipt.status == "dropped" and receipt.reason and receipt.reason.startswith("rule:")
    record = await client.get(receipt.id)
    assert record is not None and record.status == "dropped" and record.reason
    stats = await client.stats()
    assert stats["dropped"]["total"] == 1


async def test_two_workers_share_the_group_and_index_each_write_once(settings: Settings) -> None:
    small = settings.model_copy(update={"worker_batch_size": 10})
    async with AsyncMemoryClient(small) as client:
        receipts = await client.write_many(
            [{"content": f"{FACT} variant {n} with order number {n * 7919}"} for n in range(300)]
        )
        a, b = Worker(small, name="a"), Worker(small, name="b")
        ra, rb = await asyncio.gather(a.run_async(burst=True), b.run_async(burst=True))
        assert ra.batches > 0 and rb.batches > 0
        total = ra.indexed + rb.indexed + ra.merged + rb.merged + ra.dropped + rb.dropped
        assert total == 300
        stats = await client.stats()
        assert stats["processed"] == 300 and stats["backlog"] == 0
        ids = set(await _doc_ids(client))
        assert len(ids) == stats["indexed"]
        assert ids <= {r.id for r in receipts}


async def test_forget_restore_protect(client: AsyncMemoryClient, drain: Drain) -> None:
    receipt = await client.write(FACT)
    await drain()
    assert (await client.forget(receipt.id)).status == "archived"
    assert receipt.id not in [
        h.id for h in await client.search("billing-service-v2", mode="keyword")
    ]
    archived = await client.search("billing-service-v2", mode="keyword", include_archived=True)
    assert receipt.id in [h.id for h in archived]
    assert (await client.restore(receipt.id)).status == "active"
    assert (await client.protect(receipt.id)).protected
    with pytest.raises(KeyError):
        await client.forget("0" * 32)


async def test_reindex_stops_stale_workers_and_loses_nothing(
    settings: Settings, drain: Drain
) -> None:
    from hindsight_redis.errors import EmbeddingMismatch

    async with AsyncMemoryClient(settings) as client:
        before = await client.write(FACT)
        await drain()
        stale = Worker(settings, name="stale")  # embedder "hash"
        task = asyncio.create_task(stale.run_async())
        result = await client.reindex("local")
        assert result["generation"] == 2 and result["model"].startswith("local:")
        after = await client.write(OTHER)
        with pytest.raises(EmbeddingMismatch, match="reindex"):
            await asyncio.wait_for(task, 30)  # the stale worker refuses to write old vectors
        fresh = settings.model_copy(update={"embedder": "local", "claim_idle_ms": 50})
        report = await drain(fresh, name="fresh")
        assert report.indexed == 1
        async with AsyncMemoryClient(fresh) as reader:
            hits = await reader.search("who prefers answers in Chinese?", mode="vector", top_k=2)
            assert after.id in [h.id for h in hits]
            hits = await reader.search("billing-service-v2 ERR_CONN_RESET", top_k=2)
            assert before.id in [h.id for h in hits]  # reindexed under the new embedder


async def test_trimming_never_drops_unprocessed_entries(
    client: AsyncMemoryClient, settings: Settings, drain: Drain
) -> None:
    from hindsight_redis.pipeline.maintenance import trim_acknowledged

    await client.write_many([{"content": f"{FACT} #{n} acknowledged"} for n in range(20)])
    await drain(settings.model_copy(update={"stream_keep_acked": 1_000}))  # the worker keeps them
    late = await client.write_many([{"content": f"{OTHER} #{n} still queued"} for n in range(5)])
    # a consumer takes two entries and "crashes" before acknowledging them
    await client.redis.xreadgroup(client.keys.group, "crashed", {client.keys.stream: ">"}, count=2)
    trimmed = await trim_acknowledged(client.redis, client.keys, keep_below=0)
    assert trimmed == 20  # everything acknowledged, nothing else
    left = [e[0].decode() for e in await client.redis.xrange(client.keys.stream)]
    assert left == [r.stream_id for r in late]  # the 2 pending + 3 undelivered survive
    assert (await client.stats())["accepted"] == 25  # counted by the stream, not its length


async def test_acknowledged_entries_go_after_each_batch_unless_kept_for_replay(
    client: AsyncMemoryClient, settings: Settings, drain: Drain, redis: Redis
) -> None:
    keys = client.keys
    await client.write_many([{"content": f"{FACT} #{n} first"} for n in range(3)])
    await drain(settings.model_copy(update={"stream_keep_acked": 1_000}))
    assert await redis.xlen(keys.stream) == 3  # kept for replay
    await client.write_many([{"content": f"{FACT} #{n} second"} for n in range(3)])
    await drain(settings.model_copy(update={"worker_batch_size": 2}))
    assert await redis.xlen(keys.stream) == 0  # the default: every acknowledged one is gone
    stats = await client.stats()
    assert (stats["accepted"], stats["processed"], stats["backlog"]) == (6, 6, 0)
    # A second group (a replay consumer) keeps what it has not read yet.
    await redis.xgroup_create(keys.stream, "replay", id="$")
    await client.write(f"{FACT} third")
    await drain()
    assert await redis.xlen(keys.stream) == 1


async def test_recent_drops_are_kept_for_debugging(client: AsyncMemoryClient, drain: Drain) -> None:
    await client.write("好的")
    await client.write("thanks!!")
    await drain()
    drops = await client.redis.xrange(client.keys.recent_drops)
    reasons = [json.loads(fields[b"o"])["reason"] for _, fields in drops]
    assert reasons == ["rule:ack", "rule:ack"]


async def test_a_slow_batch_keeps_its_lease_and_is_not_processed_twice(settings: Settings) -> None:
    # Renewed every 0.5 s, the lease survives a stalled event loop of up to ~1 s (a loaded
    # CI machine); 4 s of work is well past the 1.5 s after which the other worker, which
    # keeps trying, would reclaim the batch and run it again without lease renewal.
    short = settings.model_copy(update={"claim_idle_ms": 1500, "worker_batch_size": 5})
    async with AsyncMemoryClient(short) as client:
        await client.write_many([{"content": f"{FACT} #{n} slow"} for n in range(5)])
        slow_a, slow_b = Slow(4.0), Slow(4.0)
        a = Worker(short, name="a", extra_stages=[slow_a])
        b = Worker(short, name="b", extra_stages=[slow_b])
        ra, rb = await asyncio.gather(a.run_async(burst=True), b.run_async(burst=True))
        assert ra.batches + rb.batches == 1
        assert ra.already + rb.already == 0
        assert (await client.stats())["processed"] == 5


async def test_a_merged_write_keeps_its_writer_and_time(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    await client.write(FACT, agent_id="planner")
    await drain()
    again = await client.write(FACT + "!", agent_id="coder", session_id="s-9", source="chat#3")
    await drain()
    record = await client.get(again.id)
    assert record is not None and record.status == "merged" and record.merged_into
    assert (record.agent_id, record.session_id, record.source) == ("coder", "s-9", "chat#3")
    assert record.created_at > 0


async def test_merges_are_logged_and_folded_into_the_memory_once(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    first = await client.write(FACT, source="chat#1")
    await drain()
    key = client.keys.doc(first.id)
    async with hash_writes(redis, key) as writes:
        for n, source in ((1, "chat#2"), (2, "chat#3"), (3, "chat#2")):  # chat#2: listed once
            await client.write(FACT + "!" * n, source=source)
        report = await drain()  # three merges, then the worker folds the logs
    assert report.merged == 3
    assert writes.count == 1  # one write (one re-index) for the three merges, not one each
    folded = await redis.hmget(key, ["sources", "access_count"])
    assert folded == [b"chat#1|chat#2|chat#3", b"3"]
    assert not await redis.exists(client.keys.merge_log, client.keys.access_log)
    record = await client.get(first.id)
    assert record is not None and record.sources == ("chat#1", "chat#2", "chat#3")


async def test_the_fold_waits_while_writes_keep_coming(
    client: AsyncMemoryClient, drain: Drain, redis: Redis, settings: Settings
) -> None:
    first = await client.write(FACT, source="chat#1")
    await drain()

    async def merge(source: str) -> None:  # as the commit logs a merge, not folded yet
        await redis.hset(client.keys.merge_log, first.id, source)
        await redis.hincrby(client.keys.access_log, first.id, 1)

    await merge("chat#2")
    worker = Worker(settings)
    worker._shared = shared_parts(settings.embedding, settings.filters, settings.llm)
    consumer = worker._consumer(redis, settings.namespace)
    await consumer.start()
    key = client.keys.doc(first.id)

    async def sources() -> bytes | None:
        return await redis.hget(key, "sources")  # type: ignore[no-any-return]

    async with hash_writes(redis, key) as writes:
        await consumer.maintain(busy=True)  # the memory is not re-indexed beside ingest
        assert await sources() == b"chat#1" and await redis.exists(client.keys.merge_log)
        consumer.last_fold -= FOLD_WHILE_BUSY_S  # ...for longer than this
        await consumer.maintain(busy=True)
        assert await sources() == b"chat#1|chat#2"
        await merge("chat#3")
        await consumer.maintain(busy=False)  # idle: at once
        assert await sources() == b"chat#1|chat#2|chat#3"
    assert writes.count == 2


async def test_a_memory_shows_the_sources_merged_into_it_before_the_fold(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    first = await client.write(FACT, source="chat#1")
    await drain()
    await redis.hset(client.keys.merge_log, first.id, "chat#2|chat#1")  # pending, unfolded
    record = await client.get(first.id)
    assert record is not None and record.sources == ("chat#1", "chat#2")
    assert await redis.hget(client.keys.doc(first.id), "sources") == b"chat#1"


async def test_a_changed_weekday_is_flagged_not_merged(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old = await client.write("The deploy window for billing is Tuesday 14:00")
    await drain()
    new = await client.write("The deploy window for billing is Thursday 14:00")
    await drain()
    record = await client.get(new.id)
    assert record is not None and record.status == "active"  # kept, not merged away
    assert record.conflicts_with == (old.id,)
    assert {r.id for r in await client.conflicts()} == {new.id, old.id}  # both, for review


async def test_a_resent_entry_of_a_committed_write_is_counted_and_the_backlog_drains(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    from hindsight_redis.core.codec import encode_event
    from hindsight_redis.core.requests import parse_write

    event = parse_write(
        {"content": "Carol moved the standup to Thursday at 10:30"},
        namespace=client.settings.namespace,
        max_content_chars=1000,
        max_tags=3,
    ).event
    for _ in range(2):  # an XADD resent because its reply was lost
        await client.redis.xadd(client.keys.stream, {EVENT_FIELD: encode_event(event)})
    await drain()
    stats = await client.stats()
    assert (stats["accepted"], stats["processed"], stats["indexed"]) == (2, 2, 1)
    assert stats["backlog"] == 0 and stats["pending"] == 0
