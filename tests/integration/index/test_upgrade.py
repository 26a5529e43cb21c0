"""Data written by an earlier release opens with this one: upgraded, and fully searchable.

``tests/data/upgrade/v1`` is the RDB of a server an earlier release wrote
(``tools/make_upgrade_fixture.py``, run with that release's code; its manifest names the
commit): memories indexed under that release's index definition, two archived, a write
held for review, stream entries read by a worker that died before acknowledging them
and entries never read, and no data format record (version 1).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Worker
from hindsight_redis.core.keys import Keys
from hindsight_redis.index.definition import expected_definition, live_definition
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.index.schema import index_schema
from hindsight_redis.index.upgrade import DATA_FORMAT_VERSION, read_format
from hindsight_redis.ops.doctor import diagnose
from hindsight_redis.settings import Settings

FIXTURE = Path(__file__).parents[2] / "data" / "upgrade" / "v1"


@pytest.fixture
def manifest() -> dict[str, Any]:
    """What the earlier release wrote (``manifest.json``)."""
    loaded: dict[str, Any] = json.loads((FIXTURE / "manifest.json").read_text())
    return loaded


@pytest.fixture
def old_server(tmp_path: Path) -> Iterator[str]:
    """An embedded Redis started on a copy of the earlier release's data; its URL."""
    from hindsight_redis.redis.server import EmbeddedServer, get_profile

    data = tmp_path / "server"
    data.mkdir()
    shutil.copyfile(FIXTURE / "dump.rdb", data / "dump.rdb")
    server = EmbeddedServer(data, get_profile("ephemeral"), port=0)
    state = server.start()
    try:
        yield state.url
    finally:
        server.stop()


@pytest.fixture
def old_settings(old_server: str, manifest: dict[str, Any], tmp_path: Path) -> Settings:
    """The settings the earlier release wrote with (``make_upgrade_fixture.settings_for``)."""
    return Settings(
        redis_url=old_server,
        key_prefix=manifest["prefix"],
        namespace=manifest["namespace"],
        profile="ephemeral",
        embedder=manifest["embedder"],
        contextual_embedder=manifest["contextual_embedder"],
        server_dir=tmp_path / "unused",
        worker_block_ms=50,
        claim_idle_ms=500,
    )


@pytest.fixture
async def old_redis(old_server: str) -> AsyncIterator[Redis]:
    """A plain client of the server holding the earlier release's data."""
    client = Redis.from_url(old_server)
    yield client
    await client.aclose()


async def _vectors(redis: Redis, keys: Keys, ids: list[str], field: str) -> dict[str, bytes]:
    return {i: await redis.hget(keys.doc(i), field) for i in ids}  # type: ignore[misc]


async def test_the_data_of_an_earlier_release_is_upgraded_and_fully_searchable(
    old_settings: Settings, old_redis: Redis, manifest: dict[str, Any]
) -> None:
    keys = Keys(manifest["prefix"], manifest["namespace"])
    record = manifest["index_record"]
    active, archived, held = manifest["active"], manifest["archived"], manifest["held"]
    pending = [*manifest["pending_read"], *manifest["pending_unread"]]
    indexed_before = [i for i in [*active, *archived] if i not in pending]

    # As the earlier release left it: no format record, entries pending, its index.
    assert (await read_format(old_redis, keys)).version == 1
    assert (await old_redis.xpending(keys.stream, keys.group))["pending"] == 4
    assert await old_redis.xlen(keys.stream) == len(pending)
    before = await diagnose(old_settings)
    assert before.facts["data_format"] == f"version 1 (this release: {DATA_FORMAT_VERSION})"
    assert any("older than this release's" in p for p in before.problems)
    vectors = await _vectors(old_redis, keys, indexed_before, record["vector_field"])
    assert all(vectors.values())
    processed = int(await old_redis.hget(keys.stats, "processed") or 0)

    report = await Worker(old_settings, name="new-release").run_async(burst=True)

    # Upgraded: format current, the index rebuilt from this release's schema over the same
    # vectors (same generation and field, nothing re-embedded), the old index dropped.
    found = await read_format(old_redis, keys)
    assert found.version == DATA_FORMAT_VERSION and "index-definition" in found.steps
    # the content claims of the earlier release, kept forever there, now expire
    claims = [k async for k in old_redis.scan_iter(match=keys.pattern_of("content"))]
    assert claims and all([await old_redis.ttl(k) > 0 for k in claims])
    index = MemoryIndex(
        old_redis, keys, old_settings.index, old_settings.search, old_settings.embedding
    )
    info = await index.info()
    assert info is not None
    assert (info.generation, info.vector_field, info.model_id) == (
        int(record["generation"]),
        record["vector_field"],
        record["model_id"],
    )
    assert info.name != record["name"]
    names = {n.decode() for n in await old_redis.execute_command("FT._LIST")}  # type: ignore[no-untyped-call]
    assert names == {info.name}
    schema = index_schema(keys, generation=info.generation, dims=info.dims)
    wanted = expected_definition(
        (f.redis_args() for f in schema.redis_fields), schema.index.stopwords or ()
    )
    live = await old_redis.execute_command("FT.INFO", keys.index_alias)  # type: ignore[no-untyped-call]
    assert wanted.differences(live_definition(live)) == []
    assert await _vectors(old_redis, keys, indexed_before, record["vector_field"]) == vectors

    # The pending entries processed, each once: nothing pending, nothing dead-lettered.
    assert (report.indexed, report.already, report.failed) == (len(pending), 0, 0)
    assert int(await old_redis.hget(keys.stats, "processed") or 0) == processed + len(pending)
    assert (await old_redis.xpending(keys.stream, keys.group))["pending"] == 0
    assert await old_redis.xlen(keys.dead_letters) == 0

    async with AsyncMemoryClient(old_settings) as client:
        stats = await client.stats()
        assert stats["memories"]["active"] == len(active)
        assert stats["memories"]["archived"] == len(archived)
        # Every memory found by its exact query, the one hit it is (pending ones too).
        for query, memory_id in manifest["queries"].items():
            hits = await client.search(query, top_k=3, mode="keyword")
            assert [h.id for h in hits] == [memory_id], query
            # The vectors of the earlier release serve the KNN (an exact text: distance 0).
            hits = await client.search(active[memory_id], top_k=1, mode="vector")
            assert [(h.id, h.content) for h in hits] == [(memory_id, active[memory_id])]
        # Archived: out of searches, restorable.
        for memory_id, content in archived.items():
            assert memory_id not in {h.id for h in await client.search(content, top_k=5)}
            restored = await client.restore(memory_id)
            assert restored.status == "active"
            assert (await client.search(content, top_k=1))[0].id == memory_id
        # Held: still held, never searchable.
        assert {r.id for r in await client.held()} == set(held)
        for memory_id, content in held.items():
            record_held = await client.get(memory_id)
            assert record_held is not None and record_held.status == "held"
            assert memory_id not in {h.id for h in await client.search(content, top_k=10)}

    after = await diagnose(old_settings)
    assert after.facts["data_format"].startswith(f"version {DATA_FORMAT_VERSION} (current")
    assert not [p for p in after.problems if p.startswith("data format")]

    # Opening it again changes nothing: the steps ran once.
    again = await index.ensure(*_embedders(old_settings))
    assert again.name == info.name
    assert (await read_format(old_redis, keys)).steps == found.steps


def _embedders(settings: Settings) -> tuple[Any, Any]:
    from hindsight_redis.providers.embedders import contextual_from_settings, embedder_from_settings

    return embedder_from_settings(settings.embedding), contextual_from_settings(settings.embedding)


async def test_a_namespace_created_by_this_release_starts_at_its_format(
    client: AsyncMemoryClient, redis: Redis, drain: Any
) -> None:
    await client.write("The harbor crane was serviced on Tuesday")
    await drain()
    found = await read_format(redis, client.keys)
    assert found.version == DATA_FORMAT_VERSION and found.steps == {}


async def test_two_processes_opening_the_old_data_at_once_end_on_one_index(
    old_settings: Settings, old_server: str, manifest: dict[str, Any]
) -> None:
    import asyncio

    keys = Keys(manifest["prefix"], manifest["namespace"])
    old_name = manifest["index_record"]["name"]
    new_name = f"{old_name}:f{DATA_FORMAT_VERSION}"
    clients = [Redis.from_url(old_server) for _ in range(2)]
    indexes = [
        MemoryIndex(c, keys, old_settings.index, old_settings.search, old_settings.embedding)
        for c in clients
    ]
    try:
        opened = await asyncio.gather(*(i.ensure(*_embedders(old_settings)) for i in indexes))
        # The one that started the build swapped; the other did not wait for it.
        assert new_name in {o.name for o in opened} <= {old_name, new_name}
        for index in indexes:
            await index.finish_upgrade()
        names = {n.decode() for n in await clients[0].execute_command("FT._LIST")}  # type: ignore[no-untyped-call]
        assert names == {new_name}
        assert (await read_format(clients[0], keys)).version == DATA_FORMAT_VERSION
        indexed = len(manifest["active"]) + len(manifest["archived"]) - 10  # 10 still pending
        raw = await clients[0].ft(keys.index_alias).info()  # type: ignore[no-untyped-call]
        assert int(raw["num_docs"]) == indexed
    finally:
        for c in clients:
            await c.aclose()


async def test_a_long_rebuild_leaves_searches_on_the_old_index_and_a_worker_finishes_it(
    old_settings: Settings,
    old_redis: Redis,
    manifest: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = Keys(manifest["prefix"], manifest["namespace"])
    old_name = manifest["index_record"]["name"]
    real_wait = MemoryIndex.wait_indexed
    looks: list[str] = []

    async def still_building(self: MemoryIndex, name: str, timeout_s: float = 300.0) -> None:
        """The new index not built at the first two looks, as a large namespace's."""
        if name != old_name:
            looks.append(name)
            if len(looks) <= 2:
                raise TimeoutError(name)
        await real_wait(self, name, timeout_s)

    monkeypatch.setattr(MemoryIndex, "wait_indexed", still_building)
    query, memory_id = "zq001x", manifest["queries"]["zq001x"]
    async with AsyncMemoryClient(old_settings) as client:  # a search opens the index
        assert [h.id for h in await client.search(query, mode="keyword")] == [memory_id]
        found = await read_format(old_redis, keys)
        assert found.version == 1 and found.building == f"{old_name}:f{DATA_FORMAT_VERSION}"
        names = {n.decode() for n in await old_redis.execute_command("FT._LIST")}  # type: ignore[no-untyped-call]
        assert names == {old_name, found.building}  # the old one serves meanwhile
        report = await diagnose(old_settings)
        assert "upgrading: index" in report.facts["data_format"]
        assert any("a running worker finishes the upgrade" in p for p in report.problems)
        assert [h.id for h in await client.search(query, mode="keyword")] == [memory_id]

        worked = await Worker(old_settings, name="new-release").run_async(burst=True)
        assert worked.indexed == len(manifest["pending_read"]) + len(manifest["pending_unread"])
        assert len(looks) >= 3  # the worker's start looked once more, its maintenance finished it
        found = await read_format(old_redis, keys)
        assert found.current and found.building == "" and "index-definition" in found.steps
        names = {n.decode() for n in await old_redis.execute_command("FT._LIST")}  # type: ignore[no-untyped-call]
        assert names == {f"{old_name}:f{DATA_FORMAT_VERSION}"}
        assert [h.id for h in await client.search(query, mode="keyword")] == [memory_id]
