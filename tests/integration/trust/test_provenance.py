"""Provenance you can filter on: every memory records how its writer was identified (a
token, the process's settings, a library argument) and whether a person reviewed it;
``trusted_only`` searches keep identified writers and reviewed memories, and a namespace
can require it; an index of an earlier release gains the fields when it is opened."""

from __future__ import annotations

from pathlib import Path

import httpx
from redis.asyncio import Redis
from redis.commands.search.index_definition import IndexDefinition, IndexType

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.fields import (
    DEFAULT_LANGUAGE,
    LANGUAGE_FIELD,
    PROVENANCE_FIELD,
    REVIEWED_FIELD,
)
from hindsight_redis.index.fields import attribute_names
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.index.schema import index_schema
from hindsight_redis.service.tokens import create_token
from tests.integration.helpers import Drain
from tests.integration.service.test_mcp_tokens import (
    HEADERS,
    INITIALIZE,
    _call,
    _server,
    _session,
)

FACTS = {
    "settings": "The billing deploy window is Tuesday at 14:00 UTC",
    "argument": "Billing deploys need a second reviewer from the payments team",
    "anonymous": "The billing service deploy is frozen during the December holidays",
}


async def _write_three(settings: Settings, drain: Drain) -> dict[str, str]:
    """A memory written as the process's own agent, one naming another agent, one by
    nobody; their ids."""
    planner = settings.model_copy(update={"agent_id": "planner"})
    async with AsyncMemoryClient(planner) as client:
        ids = {
            "settings": (await client.write(FACTS["settings"])).id,
            "argument": (await client.write(FACTS["argument"], agent_id="coder")).id,
        }
    async with AsyncMemoryClient(settings) as anonymous:
        ids["anonymous"] = (await anonymous.write(FACTS["anonymous"])).id
    await drain()
    async with AsyncMemoryClient(settings) as client:
        for memory_id in ids.values():
            record = await client.get(memory_id)
            assert record is not None and record.status == "active", record
    return ids


async def test_memories_say_how_their_writer_was_identified(
    client: AsyncMemoryClient, settings: Settings, drain: Drain
) -> None:
    ids = await _write_three(settings, drain)
    for how, memory_id in ids.items():
        record = await client.get(memory_id)
        assert record is not None and not record.reviewed
        assert record.provenance == ("" if how == "anonymous" else how)
    hits = {h.id: h for h in await client.search("billing deploy window", top_k=10)}
    assert {hits[m].provenance for m in ids.values()} == {"settings", "argument", ""}


async def test_trusted_only_keeps_identified_writers_and_reviewed_memories(
    client: AsyncMemoryClient, settings: Settings, redis: Redis, drain: Drain
) -> None:
    ids = await _write_three(settings, drain)
    everything = {h.id for h in await client.search("billing deploy window", top_k=10)}
    assert everything == set(ids.values())
    trusted = await client.search("billing deploy window", top_k=10, trusted_only=True)
    assert [h.id for h in trusted] == [ids["settings"]]
    # A person approved the argument's memory (a review sets reviewed=1).
    await redis.hset(client.keys.doc(ids["argument"]), REVIEWED_FIELD, "1")
    trusted = await client.search("billing deploy window", top_k=10, trusted_only=True)
    assert {h.id for h in trusted} == {ids["settings"], ids["argument"]}
    assert {h.id: h.reviewed for h in trusted}[ids["argument"]]
    keyword = await client.search("deploy window", mode="keyword", trusted_only=True, top_k=10)
    assert ids["anonymous"] not in {h.id for h in keyword}
    # A namespace that requires it: an argument cannot lift it.
    strict = settings.model_copy(update={"trusted_only": True})
    async with AsyncMemoryClient(strict) as guarded:
        found = await guarded.search("billing deploy window", top_k=10, trusted_only=False)
        assert {h.id for h in found} == {ids["settings"], ids["argument"]}


async def test_a_tool_call_with_a_token_is_recorded_as_such_and_its_secrets_masked(
    settings: Settings, redis: Redis, tmp_path: Path
) -> None:
    token, _ = await create_token(
        redis, settings.key_prefix, namespace=settings.namespace, agent_id="x"
    )
    secret = "ghp_" + "Zq8vN3kLp0Xw7rTy" * 2 + "AbCd"
    async with _server(settings, tmp_path / "server.log") as url:
        async with _session(url, token) as session:
            written = await _call(
                session, "memory_write", content=f"the CI token is {secret}", wait=True
            )
            hits = await _call(session, "memory_search", query="CI token", trusted_only=True)
        async with httpx.AsyncClient() as http:  # DNS rebinding: a foreign Host is refused
            headers = {**HEADERS, "authorization": f"Bearer {token}"}
            assert (await http.post(url, json=INITIALIZE, headers=headers)).status_code == 200
            headers["host"] = "evil.example.com"
            assert (await http.post(url, json=INITIALIZE, headers=headers)).status_code == 421
    assert written["status"] == "indexed"
    assert [(h["id"], h["provenance"]) for h in hits] == [(written["id"], "token")]
    assert hits[0]["content"] == "the CI token is [secret:github-token]"
    async with AsyncMemoryClient(settings) as client:
        record = await client.get(written["id"])
    assert record is not None and record.provenance == "token" and secret not in record.content


async def test_an_index_of_an_earlier_release_gains_the_fields_when_opened(
    client: AsyncMemoryClient, settings: Settings, redis: Redis, drain: Drain
) -> None:
    ids = await _write_three(settings, drain)
    index = MemoryIndex(redis, client.keys, settings.index, settings.search, settings.embedding)
    info = await index.info()
    assert info is not None
    await redis.execute_command("FT.DROPINDEX", info.name)  # type: ignore[no-untyped-call]
    schema = index_schema(
        client.keys,
        generation=info.generation,
        dims=info.dims,
        context_dims=info.context_field_dims,
        datatype=info.datatype,
        context_datatype=info.context_datatype,
    )
    added = (PROVENANCE_FIELD, REVIEWED_FIELD)
    old_fields = [f for f in schema.redis_fields if f.name not in added]
    definition = IndexDefinition(  # type: ignore[no-untyped-call]
        prefix=[client.keys.doc_prefix],
        index_type=IndexType.HASH,
        language_field=LANGUAGE_FIELD,
        language=DEFAULT_LANGUAGE,
    )
    await redis.ft(info.name).create_index(fields=old_fields, definition=definition)
    await index.wait_indexed(info.name)
    raw = await redis.execute_command("FT.INFO", info.name)  # type: ignore[no-untyped-call]
    assert not set(added) & attribute_names(raw)
    async with AsyncMemoryClient(settings) as reopened:
        await reopened.search("billing deploy window")
        raw = await redis.execute_command("FT.INFO", info.name)  # type: ignore[no-untyped-call]
        assert set(added) <= attribute_names(raw)
        await index.wait_indexed(info.name)
        trusted = await reopened.search("billing deploy window", top_k=10, trusted_only=True)
    assert [h.id for h in trusted] == [ids["settings"]]
