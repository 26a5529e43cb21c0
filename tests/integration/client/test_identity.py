"""Identity is not a filter: who a client acts as, what it sees, and recall in a token budget."""

from __future__ import annotations

import pytest

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.errors import InvalidMemory, InvalidQuery, NotFound
from hindsight_redis.language.tokens import count_tokens
from tests.integration.helpers import Drain

SHARED = "The deploy window for billing-service is Tuesday 14:00 UTC, agreed by the team"
PRIVATE = "My own note: the billing-service canary flag is named bs_canary_7 and I flip it"
OTHER = "The billing-service on-call rotation changes every Monday morning"


async def _pool(client: AsyncMemoryClient, drain: Drain) -> dict[str, str]:
    ids = {
        "shared": (await client.write(SHARED, as_agent="x")).id,
        "private": (await client.write(PRIVATE, visibility="private", as_agent="x")).id,
        "other": (await client.write(OTHER, as_agent="y")).id,
    }
    await drain()
    return ids


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
async def test_an_agent_sees_shared_memories_and_its_own_private_ones(
    client: AsyncMemoryClient, drain: Drain, mode: str
) -> None:
    ids = await _pool(client, drain)

    async def seen(as_agent: str | None, **filters: object) -> set[str]:
        hits = await client.search(
            "billing-service canary deploy on-call",
            top_k=10,
            mode=mode,
            as_agent=as_agent,
            **filters,  # type: ignore[arg-type]
        )
        return {h.id for h in hits}

    assert ids["private"] in await seen("x")  # its own
    assert ids["other"] in await seen("x")  # and everyone's shared ones, together
    assert ids["private"] not in await seen("y")
    assert ids["private"] not in await seen(None)  # no identity: shared only
    # agent_id= means "written by": y sees x's shared memory, never x's private one,
    # through the pre-filtered path (agent_id, session) as well as the post-filtered one.
    assert await seen("y", agent_id="x") == {ids["shared"]}
    assert await seen("x", agent_id="x") == {ids["shared"], ids["private"]}
    assert ids["private"] not in await seen("y", agent_id="x", tags=None, since=0)


async def test_reads_by_id_hide_another_agents_private_memory(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    ids = await _pool(client, drain)
    assert (await client.get(ids["private"], as_agent="x")) is not None
    assert await client.get(ids["private"], as_agent="y") is None
    assert await client.get(ids["private"], as_agent="") is None
    with pytest.raises(NotFound):
        await client.forget(ids["private"], as_agent="y")
    with pytest.raises(NotFound):
        await client.restore(ids["private"], as_agent="y")
    record = await client.get(ids["private"])  # the library with no identity: an operator
    assert record is not None and record.status == "active" and record.agent_id == "x"


async def test_writes_record_the_caller_unless_the_library_names_a_writer(
    settings: Settings, drain: Drain
) -> None:
    acting = settings.model_copy(update={"agent_id": "planner"})
    async with AsyncMemoryClient(acting) as client:
        own = await client.write("Planner decided to ship the search rewrite on Friday")
        named = await client.write("Imported from the old wiki: VPN needs MFA", agent_id="wiki")
        batch = await client.write_many([{"content": "Coder fixed ERR_CONN_RESET in the proxy"}])
        await drain()
        assert (await client.get(own.id)) is not None
        assert (rec := await client.get(own.id)) and rec.agent_id == "planner"
        assert (rec := await client.get(named.id)) and rec.agent_id == "wiki"
        assert (rec := await client.get(batch[0].id)) and rec.agent_id == "planner"
        private = await client.write("Planner's scratch: try HNSW m=24", visibility="private")
        await drain()
        hits = await client.search("HNSW scratch", top_k=3)
        assert private.id in {h.id for h in hits}  # settings' identity sees its own
    async with AsyncMemoryClient(settings) as anonymous:
        with pytest.raises(InvalidMemory, match="private memory needs an owner"):
            await anonymous.write("an orphan secret", visibility="private")
        hits = await anonymous.search("HNSW scratch", top_k=3)
        assert private.id not in {h.id for h in hits}


async def test_max_tokens_returns_a_prefix_of_the_ranking_within_the_budget(
    client: AsyncMemoryClient, drain: Drain
) -> None:
    topics = ["Redis streams", "consumer groups", "HNSW graphs", "BM25 scoring", "tiktoken"]
    await client.write_many(
        [
            {"content": f"Note {n} on {topic}: " + "details about it " * (3 + 5 * n)}
            for n, topic in enumerate(topics)
        ]
    )
    await drain()
    query = "notes on Redis streams consumer groups HNSW BM25 tiktoken details"
    ranked = await client.search(query, top_k=5)
    assert len(ranked) == 5
    sizes = [count_tokens(h.content) for h in ranked]
    for budget in (1, sizes[0], sizes[0] + sizes[1] - 1, sizes[0] + sizes[1], sum(sizes), 10**6):
        hits = await client.search(query, top_k=5, max_tokens=budget)
        assert [h.id for h in hits] == [h.id for h in ranked[: len(hits)]]
        assert sum(count_tokens(h.content) for h in hits) <= budget
        if len(hits) < len(ranked):  # stopped only because the next one would not fit
            assert sum(sizes[: len(hits) + 1]) > budget
    for bad in (0, -3, 2.5, True):
        with pytest.raises(InvalidQuery, match="max_tokens"):
            await client.search(query, max_tokens=bad)  # type: ignore[arg-type]
