"""``memory_erase`` over MCP: real SDK sessions against a real server process, with tokens."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.service.tokens import create_token
from tests.integration.service.test_mcp_tokens import _call, _server, _session

ALICE = "Alice Quimby's badge number at the Lindqvist lab is 55-0193"
BOB = "Bob Ferreira's badge opens the Lindqvist lab on weekends"


async def test_only_an_admin_token_erases(settings: Settings, redis: Redis, tmp_path: Path) -> None:
    prefix, ns = settings.key_prefix, settings.namespace
    writer, _ = await create_token(redis, prefix, namespace=ns, agent_id="w", scope="write")
    admin, _ = await create_token(redis, prefix, namespace=ns, agent_id="dpo", scope="admin")
    async with _server(settings, tmp_path / "server.log") as url:
        async with _session(url, writer) as session:
            alice = await _call(
                session, "memory_write", content=ALICE, tags=["user:alice"], wait=True
            )
            bob = await _call(session, "memory_write", content=BOB, tags=["user:bob"], wait=True)
            assert alice["status"] == bob["status"] == "indexed"
            refused = await session.call_tool("memory_erase", {"tag": "user:alice"})
            assert refused.isError and "PermissionDenied" in refused.content[0].text
            assert "'admin'" in refused.content[0].text
        async with _session(url, admin) as session:
            preview = await _call(session, "memory_erase", tag="user:alice", dry_run=True)
            assert preview["dry_run"] and preview["ids"] == [alice["id"]]
            receipt = await _call(session, "memory_erase", tag="user:alice")
            assert receipt["ids"] == [alice["id"]] and receipt["erased"]["memories"] == 1
            assert (receipt["by"], receipt["how"]) == ("dpo", "token")
            assert await _call(session, "memory_get", memory_id=alice["id"]) is None
            hits = await _call(session, "memory_search", query="Lindqvist lab badge")
            assert [h["id"] for h in hits] == [bob["id"]]
    async with AsyncMemoryClient(settings) as client:
        erase = (await client.audit(action="erase"))[0]
        assert (erase.by, erase.how, erase.ids) == ("dpo", "token", (alice["id"],))
        assert {(e.by, e.how) for e in await client.audit(action="write")} == {("w", "token")}
