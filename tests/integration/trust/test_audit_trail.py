"""The audit trail, wired: the workers' commits, the client's forgets, restores and
resolutions, sweeps, purges, imports and erasures each leave an entry saying who, how
identified, and which ids; none holds a memory's text."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.pipeline.maintenance import PeriodicSweep
from hindsight_redis.trust.audit import identified_by
from tests.integration.helpers import Drain, wait_for

FACTS = (
    "Greta Holm runs the Tallinn office and approves the travel budget",
    "The Tallinn office moved to the Rotermann quarter in March",
    "Greta Holm's team ships the invoicing service every second Wednesday",
)


async def test_every_change_is_recorded_with_who_and_how(
    client: AsyncMemoryClient, settings: Settings, drain: Drain, redis: Redis, tmp_path: Path
) -> None:
    written = await client.write_many(
        [{"content": FACTS[0], "agent_id": "planner"}, {"content": FACTS[1], "agent_id": "coder"}]
    )
    dropped = await client.write("ok thanks!!", agent_id="planner")
    await drain()
    writes = {e.by: e for e in await client.audit(action="write")}
    assert set(writes) == {"planner", "coder"}  # one entry per writer of the batch
    assert set(writes["planner"].ids) == {written[0].id, dropped.id}
    assert writes["planner"].details == {"indexed": "1", "dropped": "1"}

    await client.forget(written[0].id, as_agent="ops")
    await client.restore(written[0].id)
    with identified_by("token"):  # as the MCP server and the console say of token calls
        await client.forget(written[1].id, as_agent="reviewer")
    forgets = await client.audit(action="forget")
    assert [(e.by, e.how, e.ids) for e in forgets] == [
        ("reviewer", "token", (written[1].id,)),
        ("ops", "argument", (written[0].id,)),
    ]
    restore = (await client.audit(action="restore"))[0]
    assert (restore.by, restore.how, restore.ids) == ("operator", "", (written[0].id,))

    path = tmp_path / "cold.jsonl.gz"
    await client.export(path)  # the archived one
    purged = await client.purge_exported(path)
    assert purged.removed == 1
    imported = await client.import_file(path)
    assert imported.imported == 1
    purge, again = (await client.audit(action="purge"))[0], (await client.audit(action="import"))[0]
    assert purge.ids == again.ids == (written[1].id,)
    assert purge.details["file"].endswith("cold.jsonl.gz")

    report = await client.sweep(max_active=0)  # archive everything active
    sweep = (await client.audit(action="sweep"))[0]
    assert sweep.count == report.to_archive and sweep.details["archived"] == str(report.archived)

    periodic = PeriodicSweep(
        redis,
        client.keys,
        settings.sweeps.model_copy(update={"sweep_interval_s": 1e-6, "sweep_max_active": 0}),
        settings.retention,
        settings.trust,
        by="worker:w1",
    )
    await client.restore(written[1].id)
    assert periodic.start_if_due()

    async def swept() -> bool:
        return periodic.runs == 1

    await wait_for(swept)
    assert (await client.audit(action="sweep"))[0].by == "worker:w1"

    receipt = await client.erase(written[0].id, as_agent="dpo")
    erase = (await client.audit(agent="dpo"))[0]
    assert (erase.action, erase.ids, erase.digest) == ("erase", receipt.ids, receipt.digest)
    everything = await client.audit(limit=1000)
    assert {e.action for e in everything} == {
        "write",
        "forget",
        "restore",
        "purge",
        "import",
        "sweep",
        "erase",
    }
    shown = json.dumps([[e.by, e.ids, e.details] for e in everything])
    assert not any(fact in shown for fact in FACTS) and "ok thanks" not in shown
    assert await client.audit(since=erase.at + 60) == []


async def test_a_conflict_resolution_and_its_undoing_are_recorded(
    client: AsyncMemoryClient, drain: Drain, redis: Redis
) -> None:
    old = await client.write(FACTS[1], agent_id="ops")
    new = await client.write(FACTS[2], agent_id="ops")
    await drain()
    for mine, theirs in ((old.id, new.id), (new.id, old.id)):
        await redis.hset(client.keys.doc(mine), mapping={"conflicts_with": theirs})
    await client.resolve_conflict(new.id, "new", note="the Rotermann quarter", as_agent="lead")
    await client.restore(old.id, as_agent="lead")
    undo, resolve = await client.audit(action="resolve")
    assert (resolve.by, resolve.ids, resolve.details) == (
        "lead",
        (new.id, old.id),
        {"keep": "new", "archived": "1"},
    )
    assert undo.details == {"keep": "undo", "undone": "1"} and undo.by == "lead"
    assert "Rotermann" not in json.dumps([e.details for e in await client.audit()])
