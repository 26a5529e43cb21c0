"""Conflict review: resolve a flagged pair (keep new, old or both), undo it with restore,
the record of who/when/why, the newer-first rule of search, the CLI and MCP forms."""

from __future__ import annotations

import json

import pytest

from hindsight_redis import AsyncMemoryClient, InvalidArgument, MemoryClient, Settings
from hindsight_redis.cli import main
from tests.integration.helpers import Drain

OLD = "The deploy window for billing is Tuesday 14:00"
NEW = "The deploy window for billing is Thursday 14:00"


async def _pair(client: AsyncMemoryClient, drain: Drain) -> tuple[str, str]:
    old = await client.write(OLD, agent_id="planner")
    await drain()
    new = await client.write(NEW, agent_id="coder")
    await drain()
    record = await client.get(new.id)
    assert record is not None and record.conflicts_with == (old.id,)
    return old.id, new.id


async def test_keep_new_archives_the_old_memory_and_search_returns_only_the_new(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old, new = await _pair(client, drain)
    done = await client.resolve_conflict(new, "new", note="the window moved", as_agent="ops")
    assert [(d.kept, d.archived, d.resolved_by, d.note) for d in done] == [
        ((new,), old, "ops", "the window moved")
    ]
    archived = await client.get(old)
    assert archived is not None and archived.status == "archived"
    assert archived.superseded_by == new and archived.conflicts_with == ()
    assert archived.resolution is not None and archived.resolution["by"] == "ops"
    kept = await client.get(new)
    assert kept is not None and kept.status == "active" and kept.resolved_with == (old,)
    assert await client.conflicts() == []
    hits = await client.search("billing deploy window", top_k=5)
    assert [h.id for h in hits] == [new] and hits[0].conflicts_with == ()


async def test_keep_old_archives_the_new_one_whichever_id_is_named(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old, new = await _pair(client, drain)
    done = await client.resolve_conflict(old, "old")
    assert done[0].archived == new and done[0].resolved_by == "operator"
    record = await client.get(new)
    assert record is not None and record.status == "archived" and record.superseded_by == old


async def test_keep_both_clears_the_flag_and_archives_nothing(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old, new = await _pair(client, drain)
    done = await client.resolve_conflict(new, "both", note="two services")
    assert done[0].archived is None and set(done[0].kept) == {old, new}
    for memory_id in (old, new):
        record = await client.get(memory_id)
        assert record is not None and record.status == "active" and not record.conflicts_with
    assert await client.conflicts() == []
    with pytest.raises(InvalidArgument, match="no open conflict"):
        await client.resolve_conflict(new, "new")


async def test_restore_undoes_a_resolution_from_either_side(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old, new = await _pair(client, drain)
    await client.resolve_conflict(new, "new")
    restored = await client.restore(old, as_agent="ops")
    assert restored.status == "active" and restored.superseded_by is None
    assert restored.conflicts_with == (new,) and restored.resolved_with == ()
    assert {r.id for r in await client.conflicts()} == {old, new}  # flagged again
    await client.resolve_conflict(old, "both")
    await client.restore(new)  # the kept side undoes it too
    assert {r.id for r in await client.conflicts()} == {old, new}
    log = await client.conflict_resolutions()
    assert [(e.action, e.keep) for e in log] == [
        ("undo", ""),
        ("resolve", "both"),
        ("undo", ""),
        ("resolve", "new"),
    ]
    assert log[2].resolved_by == "ops" and log[0].resolved_at >= log[3].resolved_at


async def test_a_plain_forget_is_restored_as_before(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old, new = await _pair(client, drain)
    await client.forget(old)
    record = await client.restore(old)
    assert record.status == "active" and record.conflicts_with == (new,)


async def test_bad_arguments_name_the_problem(client: AsyncMemoryClient, drain: Drain) -> None:
    _, new = await _pair(client, drain)
    with pytest.raises(InvalidArgument, match="keep must be"):
        await client.resolve_conflict(new, "newest")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="no open conflict with"):
        await client.resolve_conflict(new, "new", other_id="0" * 32)
    with pytest.raises(InvalidArgument, match="note"):
        await client.resolve_conflict(new, "new", note="x" * 5000)


async def test_another_agents_private_memory_cannot_be_resolved(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old = await client.write(OLD, agent_id="planner", visibility="private")
    await drain()
    new = await client.write(NEW, agent_id="planner", visibility="private")
    await drain()
    with pytest.raises(Exception, match="no memory"):
        await client.resolve_conflict(new.id, "new", as_agent="intruder")
    assert (await client.get(old.id)) is not None


async def test_search_ranks_the_newer_of_an_open_conflict_first_unless_asked_about_the_past(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    old, new = await _pair(client, drain)
    now = await client.search("when is the billing deploy window now?", top_k=5)
    assert [h.id for h in now][:2] == [new, old]
    assert now[0].conflicts_with == (old,) and now[1].conflicts_with == (new,)
    past = await client.search("when was the billing deploy window before?", top_k=5)
    assert {h.id for h in past} == {old, new}  # the legs' own order


def test_cli_lists_resolves_and_logs(cli_env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    from hindsight_redis import Worker

    with MemoryClient(cli_env) as client:
        old = client.write(OLD).id
        Worker(cli_env).run(burst=True)
        new = client.write(NEW).id
        Worker(cli_env).run(burst=True)
    assert main(["conflicts"]) == 0
    listed = capsys.readouterr().out
    assert new in listed and old in listed and "conflicts resolve" in listed
    assert main(["conflicts", "resolve", new, "--keep", "new", "--note", "moved"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done[0]["archived"] == old and done[0]["note"] == "moved"
    assert main(["conflicts", "log"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["keep"] == "new"
    assert main(["conflicts", "resolve", new]) == 2  # no --keep: one line
    assert "--keep" in capsys.readouterr().err
    assert main(["restore", old]) == 0
    assert json.loads(capsys.readouterr().out)["conflicts_with"] == [new]


async def test_mcp_lists_and_resolves_conflicts(
    settings: Settings, client: AsyncMemoryClient, drain: Drain
) -> None:
    from mcp.shared.memory import create_connected_server_and_client_session

    from hindsight_redis.service.mcp import build_server

    old, new = await _pair(client, drain)
    server, memory = build_server(settings.model_copy(update={"agent_id": "support"}))
    try:
        async with create_connected_server_and_client_session(server) as session:
            listed = await session.call_tool("memory_conflicts", {})
            assert {r["id"] for r in _data(listed)} == {old, new}
            done = await session.call_tool(
                "memory_resolve_conflict", {"memory_id": new, "keep": "new", "note": "user said"}
            )
            assert _data(done)[0]["resolved_by"] == "support"
            bad = await session.call_tool(
                "memory_resolve_conflict", {"memory_id": new, "keep": "x"}
            )
            assert bad.isError
    finally:
        await memory.aclose()
    record = await client.get(old)
    assert record is not None and record.status == "archived" and record.superseded_by == new


def _data(result: object) -> list[dict[str, object]]:
    structured = getattr(result, "structuredContent", None)
    if structured is not None:
        return structured.get("result", structured)  # type: ignore[no-any-return]
    return json.loads(result.content[0].text)  # type: ignore[attr-defined,no-any-return]
