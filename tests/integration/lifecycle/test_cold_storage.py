"""Cold storage on a real Redis: export -> purge -> import is lossless, and purge is careful."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.errors import EmbeddingMismatch, ExportFileError
from tests.integration.helpers import Drain
from tests.integration.lifecycle.test_forgetting import facts, seed


async def hashes(redis: Redis, client: AsyncMemoryClient, ids: list[str]) -> dict[str, dict]:
    return {i: await redis.hgetall(client.keys.doc(i)) for i in ids}


async def archive(client: AsyncMemoryClient, ids: list[str]) -> None:
    for memory_id in ids:
        await client.forget(memory_id)


async def test_export_purge_import_restores_every_field_of_every_archived_memory(
    client: AsyncMemoryClient, drain: Drain, redis: Redis, tmp_path: Path
) -> None:
    items = facts(20, tags=["team:core"], agent_id="planner")
    for n, item in enumerate(items):  # every field a write can carry, each memory its own
        item.update(
            context=f"Said in ops review {n} of the platform team",
            session_id=f"session-{n % 3}",
            task_type="ops",
            source=f"runbook-{n}",
            importance=0.5 + n / 100,
            half_life_days=30.0 + n,
            occurred_at=1_700_000_000.0 + n * 3600,
        )
    ids = await seed(client, drain, items)
    archived, active = ids[:12], ids[12:]
    await archive(client, archived)
    await client.protect(archived[0], True)
    before = await hashes(redis, client, ids)
    assert all(b"ctx_vec" in h and b"vec_g1" in h for h in before.values())  # both vectors
    carried = [b"context", b"session_id", b"task_type", b"source", b"occurred_at"]
    carried += [b"half_life_days", b"agent_id", b"tags", b"archived_at", b"archive_reason"]
    for memory_id in archived:  # the data covers them: a field lost on the way shows
        assert all(before[memory_id].get(f) for f in carried), before[memory_id]

    path = tmp_path / "cold.jsonl.gz"
    seen: list[tuple[int, int]] = []
    exported = await client.export(path, progress=lambda done, total: seen.append((done, total)))
    assert exported.count == 12 and seen[-1] == (12, 12)
    with gzip.open(path, "rt") as f:
        header = json.loads(f.readline())
    assert header["namespace"] == "test" and header["count"] == 12
    assert header["embedding_dims"] > 0 and header["contextual_model"]

    purged = await client.purge_exported(path)
    assert (purged.removed, purged.kept_changed, purged.archived_left) == (12, 0, 0)
    assert all([not await redis.exists(client.keys.doc(i)) for i in archived])
    assert (await client.stats())["memories"]["active"] == 8

    imported = await client.import_file(path)
    assert (imported.imported, imported.already_present, imported.reembedded) == (12, 0, 0)
    assert await hashes(redis, client, ids) == before  # every field, both vectors, equal

    again = await client.import_file(path)
    assert (again.imported, again.already_present) == (0, 12)  # importing twice adds nothing

    memory = await client.restore(archived[3])
    hits = await client.search(memory.content, top_k=3)
    assert hits and hits[0].id == archived[3]
    assert not {h.id for h in hits} & set(archived[4:])  # the others stay archived
    assert set(active) <= {r.id for r in [await client.get(i) for i in active] if r}


async def test_purge_keeps_what_changed_since_the_export_or_is_not_in_it(
    client: AsyncMemoryClient, drain: Drain, redis: Redis, tmp_path: Path
) -> None:
    ids = await seed(client, drain, facts(10))
    await archive(client, ids[:6])
    path = tmp_path / "all.jsonl.gz"
    assert (await client.export(path, status="all")).count == 10
    await client.restore(ids[0])  # active again: never purged
    await client.restore(ids[1])
    await client.forget(ids[1])  # archived again, at another time: changed since
    await redis.hincrby(client.keys.doc(ids[2]), "access_count", 1)  # read since
    await archive(client, ids[6:8])  # archived after the export: not in it
    report = await client.purge_exported(path)
    assert report.removed == 3  # ids[3:6]
    assert report.kept_changed == 2 and report.kept_not_archived == 4 + 1
    assert report.archived_left == 4  # ids[1], ids[2], ids[6], ids[7]
    for memory_id in ids[:3] + ids[6:]:
        assert await redis.exists(client.keys.doc(memory_id))
    rerun = await client.purge_exported(path)  # after a crash, a rerun finishes the job
    assert rerun.removed == 0 and rerun.already_gone == 3


async def test_a_damaged_or_foreign_export_deletes_nothing(
    client: AsyncMemoryClient, drain: Drain, settings: Settings, tmp_path: Path
) -> None:
    ids = await seed(client, drain, facts(4))
    await archive(client, ids)
    path = tmp_path / "x.jsonl.gz"
    await client.export(path)
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    line = json.loads(lines[-1])
    line["fields"]["content"] = "tampered"
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(gzip.compress(("\n".join([*lines[:-1], json.dumps(line)]) + "\n").encode()))
    with pytest.raises(ExportFileError, match="does not match"):
        await client.purge_exported(damaged)
    short = tmp_path / "short.jsonl.gz"
    short.write_bytes(gzip.compress(("\n".join(lines[:-1]) + "\n").encode()))
    with pytest.raises(ExportFileError, match="header says 4"):
        await client.purge_exported(short)
    other = settings.model_copy(update={"namespace": "elsewhere"})
    async with AsyncMemoryClient(other) as elsewhere:
        with pytest.raises(ExportFileError, match="namespace 'test'"):
            await elsewhere.purge_exported(path)
    assert (await client.stats())["memories"]["archived"] == 4


async def test_import_into_another_namespace_with_another_embedder_re_embeds(
    client: AsyncMemoryClient, drain: Drain, settings: Settings, tmp_path: Path
) -> None:
    ids = await seed(client, drain, facts(6))
    path = tmp_path / "active.jsonl.gz"
    await client.export(path, status="active")
    local = settings.model_copy(
        update={"namespace": "moved", "embedder": "local", "contextual_embedder": "none"}
    )
    async with AsyncMemoryClient(local) as moved:
        report = await moved.import_file(path)
        assert (report.imported, report.reembedded) == (6, 6)
        record = await moved.get(ids[2])
        assert record is not None and record.namespace == "moved"
        assert record.embedding_model == "local:static-e5-multilingual-256"
        original = await client.get(ids[2])
        assert original is not None and record.content == original.content
        hits = await moved.search(record.content, top_k=1, mode="vector")
        assert hits and hits[0].id == ids[2]
    mismatched = settings.model_copy(update={"namespace": "moved", "embedder": "hash"})
    async with AsyncMemoryClient(mismatched) as wrong:
        with pytest.raises(EmbeddingMismatch):  # the index guard: moved is a local index now
            await wrong.import_file(path)


async def test_purge_releases_the_content_claims_of_what_it_deleted_only(
    client: AsyncMemoryClient, drain: Drain, redis: Redis, tmp_path: Path
) -> None:
    # A content claim per memory was kept forever: a namespace whose archived memories go
    # to cold files kept one key per memory it ever held (found by the soak benchmark).
    shared = facts(4, tags=["team:core"])
    private = facts(2, start=4, visibility="private", agent_id="planner", tags=["partition:ann"])
    ids = await seed(client, drain, shared + private)
    claims = [k async for k in redis.scan_iter(match=client.keys.pattern_of("content"))]
    assert len(claims) == 6
    purged, kept = ids[:2] + ids[4:5], ids[2:4] + ids[5:]
    await archive(client, purged)
    path = tmp_path / "cold.jsonl.gz"
    await client.export(path)
    assert (await client.purge_exported(path)).removed == 3
    holders = {(await redis.get(k)).decode() for k in claims if await redis.exists(k)}
    assert holders == set(kept)  # the purged memories' claims only, private ones included

    twin = await client.write(**shared[0])  # a claim released names no merge target
    await drain()
    record = await client.get(twin.id)
    assert record is not None and record.status == "active"
