"""Hostile input to the client: whatever an agent sends ends in a clear error or a correct result.

Property tests (hypothesis, strategies in ``hostile.py``) against the
session's Redis and a background worker: query syntax, NUL bytes, lone
surrogates, look-alike letters, huge strings and numbers, wrong types. A call
either raises an ``InvalidArgument`` whose message names the problem, or
returns what is right: hits of the caller's namespace that it may see and
that match its filters, and every accepted write reads back byte for byte
(``content``, or ``original`` once summarized), or was dropped with a reason,
or merged into a memory that exists. Anything else (a crash, a raw Redis
error, a hang, a ``dead_letter``) fails the test. The MCP tools get the same
in ``test_hostile_mcp.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.core.checks import MODES
from hindsight_redis.errors import HindsightError, InvalidArgument, NotFound
from tests.integration.helpers import Drain
from tests.integration.hostile import (
    POOL_TEXTS,
    PROPERTY,
    Pool,
    bad_budget,
    bounded,
    check_stored,
    clear,
    hostile_text,
    identifier,
    joined,
    odd_text,
    rarely,
    tag_list,
    text_or_junk,
    top_k,
    when,
    write_fields,
    write_pool,
    wrong_type,
)


@pytest.fixture
async def pool(client: AsyncMemoryClient, settings: Settings, drain: Drain) -> Pool:
    """Shared and private memories in two namespaces, indexed (once per test)."""
    return await write_pool(client, settings, drain)


# -- search ----------------------------------------------------------------------


@hsettings(PROPERTY, max_examples=120)
@given(
    query=rarely(st.one_of(joined, st.sampled_from(POOL_TEXTS)), odd_text),
    top_k=top_k,
    mode=rarely(st.sampled_from(MODES), odd_text),
    as_agent=rarely(st.sampled_from([None, "x", "y", ""]), st.one_of(identifier, odd_text)),
    filters=st.fixed_dictionaries(
        {},
        optional={
            "agent_id": text_or_junk,
            "session_id": text_or_junk,
            "task_type": text_or_junk,
            "tags": tag_list,
            "since": when,
            "until": when,
            "include_archived": rarely(st.booleans(), wrong_type),
            "max_tokens": rarely(st.one_of(st.none(), st.integers(1, 10**6)), bad_budget),
        },
    ),
)
async def test_hostile_searches_find_only_what_the_caller_may_see(
    client: AsyncMemoryClient,
    pool: Pool,
    query: Any,
    top_k: Any,
    mode: Any,
    as_agent: Any,
    filters: dict[str, Any],
) -> None:
    try:
        hits = await bounded(
            client.search(query, top_k=top_k, mode=mode, as_agent=as_agent, **filters)
        )
    except HindsightError as e:
        clear(e)
        return
    assert isinstance(top_k, int) and 1 <= top_k <= 100 and mode in MODES
    event("searched: hits" if hits else "searched: none")
    seen = pool.visible_to(as_agent or "")
    assert len(hits) <= top_k
    for hit in hits:
        assert hit.id not in pool.foreign, "a memory of another namespace"
        assert hit.id in seen, f"{hit.id} is not visible to {as_agent!r}"
        assert hit.content == seen[hit.id]
        if filters.get("agent_id"):
            assert hit.agent_id == filters["agent_id"]
        if filters.get("session_id"):
            assert hit.session_id == filters["session_id"]
        if filters.get("task_type"):
            assert hit.task_type == filters["task_type"]
        assert {t.strip() for t in filters.get("tags") or ()} <= set(hit.tags)
        since, until = filters.get("since"), filters.get("until")
        assert since is None or hit.created_at >= since
        assert until is None or hit.created_at <= until


async def test_every_word_of_injected_syntax_still_finds_by_keyword(
    client: AsyncMemoryClient, pool: Pool
) -> None:
    # Operators are dropped, words kept: the injection neither widens nor breaks the query.
    for query in ("ERR_CONN_RESET | * -@visibility:{private}", '"ERR_CONN_RESET" @tag:{x}'):
        hits = await client.search(query, mode="keyword", top_k=10, as_agent="y")
        assert [h.id for h in hits] == [i for i, t in pool.shared.items() if "ERR_CONN" in t]
    for query in ("*", "-", "{}", "|", "@namespace:{other}", "*)|(*", "$BLOB", "=>[KNN 5]"):
        assert await client.search(query, mode="keyword", as_agent="y") == []
    # Fuzzy-match syntax is a plain word: "x" (of "@tag:{x}" in one memory), not a fuzzy one.
    hits = await client.search("%%x%%", mode="keyword", as_agent="y")
    assert [h.content for h in hits] == [t for t in pool.shared.values() if "{x}" in t]


async def _explain_calls(redis: Redis) -> int:
    stats = await redis.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k.lower() == "cmdstat_ft.explaincli")


async def test_a_query_of_thousands_of_chinese_runs_costs_one_round_trip(
    client: AsyncMemoryClient, pool: Pool, redis: Redis
) -> None:
    before = await _explain_calls(redis)
    query = " ".join(chr(0x4E00 + i) for i in range(3_999))  # 3,999 runs to segment
    hits = await bounded(client.search(query, mode="keyword", as_agent="y"))
    assert {h.id for h in hits} <= set(pool.shared)
    assert await _explain_calls(redis) - before <= 64  # the first runs only, pipelined


# -- writes ------------------------------------------------------------------


@hsettings(PROPERTY, max_examples=90)
@given(fields=write_fields)
async def test_a_hostile_write_is_refused_clearly_or_read_back_byte_for_byte(
    client: AsyncMemoryClient, worker: Worker, fields: dict[str, Any]
) -> None:
    try:
        receipt = await bounded(client.write(**fields, wait=True, timeout_s=20))
    except HindsightError as e:
        clear(e)
        return
    await check_stored(client, fields, receipt)


@hsettings(PROPERTY, max_examples=30)
@given(
    items=rarely(
        st.lists(rarely(write_fields, wrong_type), max_size=6),
        st.one_of(wrong_type, st.sampled_from(["abc", {"content": "a dict, not a list"}])),
    )
)
async def test_a_hostile_batch_is_refused_whole_or_every_item_read_back(
    client: AsyncMemoryClient, worker: Worker, items: Any
) -> None:
    before = (await client.stats())["accepted"]
    try:
        waited = (
            [{**i, "wait": True, "timeout_s": 20} if isinstance(i, dict) else i for i in items]
            if isinstance(items, list)
            else items
        )
        receipts = await bounded(client.write_many(waited))
    except HindsightError as e:
        clear(e)
        assert (await client.stats())["accepted"] == before, "a refused batch left writes"
        return
    assert len(receipts) == len(items)
    for fields, receipt in zip(items, receipts, strict=True):
        await check_stored(client, fields, receipt)


# -- ids -------------------------------------------------------------------------


@hsettings(PROPERTY, max_examples=60)
@given(
    memory_id=st.one_of(
        hostile_text,
        wrong_type,
        st.sampled_from(
            [
                "{id}",
                "{id}",
                "{private}",
                "x}:mem:{id}",
                "{other}:mem:{id}",
                "*",
                "{id}*",
                "..",
                "{id}\x00",
                "{id} ",
                "{ID}",
            ]
        ),
        st.text(st.sampled_from("abcdef0123456789-_.é"), min_size=1, max_size=40),
    ),
    action=st.sampled_from(["get", "forget", "restore", "protect"]),
    as_agent=st.sampled_from(["y", "", "x "]),
)
async def test_a_hostile_id_reads_nothing_and_changes_nothing(
    client: AsyncMemoryClient, pool: Pool, memory_id: Any, action: str, as_agent: str
) -> None:
    target, private = next(iter(pool.foreign)), next(iter(pool.private_x))
    if isinstance(memory_id, str):  # an id of another namespace, or x's private one
        memory_id = memory_id.replace("{id}", target).replace("{ID}", target.upper())
        memory_id = memory_id.replace("{private}", private)
    call = getattr(client, action)(memory_id, as_agent=as_agent)
    try:
        result = await bounded(call)
    except NotFound as e:
        assert "no memory" in str(e)
        return
    except HindsightError as e:
        clear(e)
        return
    # Only an id of this namespace that the caller may see can be read or changed.
    assert action == "get" and result is None, (memory_id, result)


async def test_no_hostile_id_left_a_trace(client: AsyncMemoryClient, pool: Pool) -> None:
    for memory_id in [*pool.foreign, "x}:mem:1", "*", "a\x00b"]:
        for action in ("forget", "restore", "protect"):
            with pytest.raises((NotFound, InvalidArgument)):
                await getattr(client, action)(memory_id)
    for memory_id in (*pool.shared, *pool.private_x):
        record = await client.get(memory_id)
        assert record is not None and record.status == "active" and not record.protected
