"""``occurred_at`` on a real Redis: stored, shown, filtered, exported, added to old indexes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.commands.search.index_definition import IndexDefinition, IndexType

from hindsight_redis import AsyncMemoryClient, MemoryClient, Settings
from hindsight_redis.cli import main
from hindsight_redis.core.fields import DEFAULT_LANGUAGE, LANGUAGE_FIELD, OCCURRED_FIELD
from hindsight_redis.index.fields import attribute_names
from hindsight_redis.index.manager import MemoryIndex
from hindsight_redis.index.schema import index_schema
from tests.integration.helpers import Drain

MAY_8 = 1683554160.0  # 2023-05-08 13:56 UTC
JUNE_9 = 1686340500.0  # 2023-06-09 19:55 UTC
FACTS = {
    "may": "Caroline went to the LGBTQ support group in the community centre",
    "june": "Melanie painted a sunrise over the lake with her kids",
    "undated": "Caroline is researching adoption agencies for the future",
}


async def _write_three(client: AsyncMemoryClient, drain: Drain) -> dict[str, str]:
    receipts = await client.write_many(
        [
            {"content": FACTS["may"], "occurred_at": MAY_8},
            {"content": FACTS["june"], "occurred_at": JUNE_9},
            {"content": FACTS["undated"]},
        ]
    )
    await drain()
    return dict(zip(FACTS, (r.id for r in receipts), strict=True))


async def test_a_memory_carries_when_it_happened_to_get_and_search(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    receipt = await client.write(FACTS["may"], occurred_at=MAY_8)
    assert (await drain()).indexed == 1
    record = await client.get(receipt.id)
    assert record is not None and record.occurred_at == MAY_8
    assert record.created_at > MAY_8  # written now, about something earlier
    for mode in ("hybrid", "vector", "keyword"):
        hits = await client.search("LGBTQ support group", mode=mode)  # type: ignore[arg-type]
        assert hits[0].id == receipt.id and hits[0].occurred_at == MAY_8, mode


async def test_occurred_filters_select_by_when_it_happened(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    ids = await _write_three(client, drain)
    query = "Caroline Melanie support group sunrise adoption"
    everything = {h.id for h in await client.search(query, top_k=10)}
    assert everything == set(ids.values())  # no occurred filter: undated ones are found too
    for mode in ("hybrid", "vector", "keyword"):
        may = await client.search(
            query, top_k=10, mode=mode, occurred_since=MAY_8 - 3600, occurred_until=MAY_8 + 3600
        )  # type: ignore[arg-type]
        assert [h.id for h in may] == [ids["may"]], mode
    since_june = await client.search(query, top_k=10, occurred_since=JUNE_9)
    assert [h.id for h in since_june] == [ids["june"]]
    dated = await client.search(query, top_k=10, occurred_until=JUNE_9)
    assert {h.id for h in dated} == {ids["may"], ids["june"]}


def test_the_sync_client_writes_and_filters_on_occurred_at(
    sync_client: MemoryClient, drain: Drain
) -> None:
    import asyncio

    receipt = sync_client.write(FACTS["june"], occurred_at=JUNE_9)
    asyncio.run(drain())
    hits = sync_client.search("sunrise lake", occurred_since=JUNE_9, occurred_until=JUNE_9)
    assert [(h.id, h.occurred_at) for h in hits] == [(receipt.id, JUNE_9)]


async def test_an_index_built_without_the_field_gains_it_on_open(
    client: AsyncMemoryClient, drain: Drain, redis: Redis, settings: Settings
) -> None:
    ids = await _write_three(client, drain)
    index = MemoryIndex(redis, client.keys, settings.index, settings.search, settings.embedding)
    info = await index.info()
    assert info is not None
    # Rebuild it as an earlier release did: the same schema, no occurred_at.
    await redis.execute_command("FT.DROPINDEX", info.name)  # type: ignore[no-untyped-call]
    schema = index_schema(
        client.keys,
        generation=info.generation,
        dims=info.dims,
        context_dims=info.context_field_dims,
        datatype=info.datatype,
        context_datatype=info.context_datatype,
    )
    old_fields = [f for f in schema.redis_fields if f.name != OCCURRED_FIELD]
    definition = IndexDefinition(  # type: ignore[no-untyped-call]
        prefix=[client.keys.doc_prefix],
        index_type=IndexType.HASH,
        language_field=LANGUAGE_FIELD,
        language=DEFAULT_LANGUAGE,
    )
    await redis.ft(info.name).create_index(fields=old_fields, definition=definition)
    await index.wait_indexed(info.name)
    raw = await redis.execute_command("FT.INFO", info.name)  # type: ignore[no-untyped-call]
    assert OCCURRED_FIELD not in attribute_names(raw)

    async with AsyncMemoryClient(settings) as reopened:
        may = await reopened.search("support group", occurred_since=MAY_8, occurred_until=MAY_8)
        raw = await redis.execute_command("FT.INFO", info.name)  # type: ignore[no-untyped-call]
        assert OCCURRED_FIELD in attribute_names(raw)
        await index.wait_indexed(info.name)  # the memories stored before are indexed again
        may = await reopened.search("support group", occurred_since=MAY_8, occurred_until=MAY_8)
        assert [h.id for h in may] == [ids["may"]]
        hits = await reopened.search("adoption agencies", top_k=10)
        assert ids["undated"] in {h.id for h in hits}
    info_after = await redis.ft(info.name).info()  # type: ignore[no-untyped-call]
    assert int(info_after["hash_indexing_failures"]) == 0


async def test_export_and_import_keep_occurred_at(
    client: AsyncMemoryClient, drain: Drain, settings: Settings, tmp_path: Path
) -> None:
    ids = await _write_three(client, drain)
    path = tmp_path / "dated.jsonl.gz"
    assert (await client.export(path, status="active")).count == 3
    other = settings.model_copy(update={"namespace": "copy"})
    async with AsyncMemoryClient(other) as copy:
        assert (await copy.import_file(path)).imported == 3
        for name, when in (("may", MAY_8), ("june", JUNE_9), ("undated", None)):
            record = await copy.get(ids[name])
            assert record is not None and record.occurred_at == when, name
        june = await copy.search("sunrise", occurred_since=JUNE_9, occurred_until=JUNE_9)
        assert [h.id for h in june] == [ids["june"]]


def test_the_cli_writes_an_iso_date_and_filters_on_it(
    cli_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["write", FACTS["june"], "--occurred-at", "2023-06-09T19:55:00Z"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert main(["worker", "--burst"]) == 0
    capsys.readouterr()
    assert main(["get", receipt["id"]]) == 0
    assert json.loads(capsys.readouterr().out)["occurred_at"] == JUNE_9
    window = ["--occurred-since", "2023-06-09", "--occurred-until", "2023-06-10"]
    assert main(["search", "sunrise lake", "--json", *window]) == 0
    assert [h["id"] for h in json.loads(capsys.readouterr().out)] == [receipt["id"]]
    assert main(["search", "sunrise lake", "--occurred-since", "2023-06-10"]) == 0
    assert capsys.readouterr().out.strip() == "no memory matches"
    assert main(["search", "sunrise lake"]) == 0
    assert "[2023-06-09] Melanie painted" in capsys.readouterr().out
