"""The audit trail on a real Redis: appended, read newest first, filtered, trimmed by age."""

from __future__ import annotations

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.trust.audit import read_audit, record_audit


async def test_the_trail_is_read_newest_first_and_filtered(client: AsyncMemoryClient) -> None:
    redis, keys = await client.connect(), client.keys
    await record_audit(redis, keys, "forget", "alice", retention_days=30, how="token", ids=["a"])
    await record_audit(redis, keys, "erase", "ops", retention_days=30, ids=["b", "c"], tag="t")
    entries = await read_audit(redis, keys)
    assert [e.action for e in entries] == ["erase", "forget"]
    assert entries[0].ids == ("b", "c") and entries[0].details == {"tag": "t"}
    assert [e.action for e in await read_audit(redis, keys, agent="alice")] == ["forget"]
    assert [e.by for e in await read_audit(redis, keys, action="erase")] == ["ops"]
    assert await read_audit(redis, keys, since=entries[0].at + 60) == []
