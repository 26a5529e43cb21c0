"""Search against the real embedded Redis: modes, filters, identifiers, Chinese, injection."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio import Redis

from hindsight_redis.core.models import SearchFilters
from hindsight_redis.errors import EmbeddingMismatch, InvalidQuery
from hindsight_redis.lifecycle import access
from hindsight_redis.lifecycle.access import HitCounter, flush_access_log
from hindsight_redis.ops.admin import list_conflicts
from hindsight_redis.providers.embedders import HashEmbedder
from hindsight_redis.search.query import SYNONYM_WEIGHT, keyword_query
from hindsight_redis.search.searcher import Searcher
from hindsight_redis.settings import Settings
from tests.integration.helpers import IndexEnv, open_index_env, wait_for

Env = IndexEnv


@pytest.fixture
async def env(settings: Settings, redis: Redis) -> Env:
    return await open_index_env(redis, settings)


CORPUS = {
    "tea": "Alice drinks green tea every morning before standup",
    "deploy": "The billing-service-v2 deploy failed with ERR_CONN_RESET on the gateway",
    "user": "Account user_42 asked for a refund of the annual plan",
    "coffee": "Bob prefers espresso coffee after lunch",
    "zh_lang": "用户喜欢用中文回答问题",
    "zh_deploy": "部署数据库迁移脚本时出现超时错误",
}


async def _load(env: Env) -> None:
    for memory_id, content in CORPUS.items():
        await env.put(memory_id, content, agent_id="planner", session_id="s1")
    await env.indexed(len(CORPUS))


@pytest.mark.parametrize("mode", ["vector", "keyword", "hybrid"])
async def test_each_mode_finds_the_matching_memory(env: Env, mode: str) -> None:
    await _load(env)
    assert (await env.search("green tea in the morning", mode=mode, top_k=3))[0] == "tea"


async def test_hits_carry_fields_and_scores(env: Env) -> None:
    await _load(env)
    hits = await env.searcher.search("espresso coffee")
    best = hits[0]
    assert best.id == "coffee" and best.agent_id == "planner" and best.session_id == "s1"
    assert best.vector is not None and best.keyword is not None and best.fused > 0
    assert best.content == CORPUS["coffee"]


@pytest.mark.parametrize(
    "identifier, expected",
    [
        ("billing-service-v2", "deploy"),
        ("ERR_CONN_RESET", "deploy"),
        ("user_42", "user"),
        ("what happened to billing-service-v2?", "deploy"),
    ],
)
async def test_identifiers_are_found_by_keyword(env: Env, identifier: str, expected: str) -> None:
    await _load(env)
    assert (await env.search(identifier, mode="keyword"))[0] == expected
    assert (await env.search(identifier, mode="hybrid"))[0] == expected


async def test_identifier_inside_chinese_memory_is_found(env: Env) -> None:
    await env.put("zh_err", "部署 billing-service-v2 时出现 ERR_CONN_RESET 错误")
    await env.put("other", "The payments service is healthy")
    await env.indexed(2)
    assert await env.search("ERR_CONN_RESET", mode="keyword") == ["zh_err"]
    assert (await env.search("billing-service-v2", mode="keyword"))[0] == "zh_err"


@pytest.mark.parametrize(
    "query, expected",
    [
        ("中文", "zh_lang"),
        ("用户喜欢什么语言", "zh_lang"),
        ("超时错误", "zh_deploy"),
        ("数据库", "zh_deploy"),
    ],
)
async def test_chinese_keyword_search_segments_words(env: Env, query: str, expected: str) -> None:
    await _load(env)
    assert (await env.search(query, mode="keyword"))[0] == expected


async def test_chinese_vector_and_hybrid_search(env: Env) -> None:
    await _load(env)
    assert (await env.search("部署脚本超时", mode="vector"))[0] == "zh_deploy"
    assert (await env.search("部署脚本超时", mode="hybrid"))[0] == "zh_deploy"


async def test_filters_by_agent_session_task_and_tags(env: Env) -> None:
    await env.put(
        "a1",
        "deploy notes for the gateway",
        agent_id="a",
        session_id="s1",
        task_type="ops",
        tags=("team:x", "prod"),
    )
    await env.put(
        "b1",
        "deploy notes for the gateway",
        agent_id="b",
        session_id="s2",
        task_type="dev",
        tags=("team:y",),
    )
    await env.indexed(2)
    assert await env.search("deploy", filters=SearchFilters(agent_id="a")) == ["a1"]
    assert await env.search("deploy", filters=SearchFilters(session_id="s2")) == ["b1"]
    assert await env.search("deploy", filters=SearchFilters(task_type="ops")) == ["a1"]
    assert await env.search("deploy", filters=SearchFilters(tags=("team:y",))) == ["b1"]
    assert await env.search("deploy", filters=SearchFilters(tags=("team:x", "prod"))) == ["a1"]
    assert await env.search("deploy", filters=SearchFilters(tags=("team:x", "team:y"))) == []


async def test_keyword_score_sums_every_matching_term_under_a_filter(env: Env) -> None:
    # Under a tag filter RediSearch can score a union of terms for only some
    # of the terms a memory matches; the keyword leg adds them all up (optional
    # terms), so the one memory with all three terms ranks first. The old
    # union-only shape failed this only some of the time (it depends on
    # document order), so the LoCoMo benchmark is its real guard: keyword
    # R@10 0.497 with it, 0.627 without.
    # Long enough that one term alone would rank it last (BM25 length norm),
    # short enough that three terms summed rank it first by a clear margin.
    long = "painting bright colors after running through the quiet harbour park"
    for memory_id, content, session in [
        ("one", "painting classes", "s"),
        ("elsewhere", "painting colors running", "x"),
        ("two", "colors of autumn", "s"),
        ("three", "running shoes", "s"),
        ("all", long, "s"),
    ]:
        await env.put(memory_id, content, session_id=session)
    await env.indexed(5)
    found = await env.search(
        "painting colors running", mode="keyword", filters=SearchFilters(session_id="s")
    )
    assert found[0] == "all", found


async def test_filters_by_time_range(env: Env) -> None:
    await env.put("old", "quarterly report draft", created_at=1_000.0)
    await env.put("new", "quarterly report final", created_at=2_000.0)
    await env.indexed(2)
    assert await env.search("quarterly report", filters=SearchFilters(until=1_500)) == ["old"]
    assert await env.search("quarterly report", filters=SearchFilters(since=1_500)) == ["new"]


async def test_archived_excluded_unless_asked(env: Env) -> None:
    await env.put("live", "the office wifi password rotates monthly")
    await env.put("gone", "the office wifi password is hunter2", status="archived")
    await env.indexed(2)
    assert await env.search("office wifi password") == ["live"]
    found = await env.search("office wifi password", filters=SearchFilters(include_archived=True))
    assert sorted(found) == ["gone", "live"]


async def test_private_memories_only_for_their_agent(env: Env) -> None:
    await env.put("mine", "secret plan for the launch", agent_id="a", visibility="private")
    await env.put("shared", "public plan for the launch", agent_id="b")
    await env.indexed(2)
    assert await env.search("plan for the launch") == ["shared"]
    seen_by_a = await env.search("plan for the launch", filters=SearchFilters(viewer="a"))
    assert sorted(seen_by_a) == ["mine", "shared"]
    # "written by a" never shows a's private memory to anyone but a.
    assert await env.search("plan for the launch", filters=SearchFilters(agent_id="a")) == []
    mine = SearchFilters(agent_id="a", viewer="a")
    assert await env.search("plan for the launch", filters=mine) == ["mine"]
    assert await env.search("plan for the launch", filters=SearchFilters(viewer="b")) == ["shared"]


@pytest.mark.parametrize(
    "hostile",
    ["a|b}", "*", "-@status:{archived}", "x} | @status:{archived", "planner) | (*", "$BLOB"],
)
async def test_injected_filter_values_never_widen_the_filter(env: Env, hostile: str) -> None:
    await env.put("live", "launch checklist", agent_id="planner")
    await env.put("gone", "launch checklist archived", agent_id="planner", status="archived")
    await env.put("weird", "launch checklist odd", agent_id="a|b}", tags=("a|b}",))
    await env.indexed(3)
    # The query finds the live memory: an empty result below is the filter's doing.
    honest = SearchFilters(agent_id="planner")
    assert await env.search("launch checklist", filters=honest, top_k=10) == ["live"]
    own = {"weird"} if hostile == "a|b}" else set()  # a value matches only its own memory
    for filters in (
        SearchFilters(agent_id=hostile),
        SearchFilters(session_id=hostile),
        SearchFilters(task_type=hostile),
        SearchFilters(tags=(hostile,)),
    ):
        found = await env.search("launch checklist", filters=filters, top_k=10)
        assert set(found) <= own
    assert await env.search("launch checklist", filters=SearchFilters(agent_id="a|b}")) == ["weird"]


@pytest.mark.parametrize(
    "query",
    [
        "-@status:{archived}",
        "@status:{archived} | *",
        "* | launch",
        "$BLOB ~ %%x%% =>[KNN 5 @x $y]",
    ],
)
async def test_injected_query_text_never_widens_the_filter(env: Env, query: str) -> None:
    await env.put("live", "launch checklist status")
    await env.put("gone", "launch checklist archived status", status="archived")
    await env.indexed(2)
    reached = False
    for mode in ("keyword", "hybrid", "vector"):
        found = await env.search(query, mode=mode, top_k=10)
        everything = SearchFilters(include_archived=True)
        unfiltered = await env.search(query, mode=mode, top_k=10, filters=everything)
        assert found == [m for m in unfiltered if m != "gone"]  # the status filter, no more
        reached = reached or "gone" in unfiltered
    assert reached  # the query does reach the archived memory: only the filter keeps it out


@pytest.mark.parametrize("kwargs", [{"top_k": 0}, {"top_k": 101}, {"mode": "fuzzy"}])
async def test_invalid_arguments_rejected(env: Env, kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidQuery):
        await env.search("x", **kwargs)


async def test_empty_query_rejected(env: Env) -> None:
    with pytest.raises(InvalidQuery):
        await env.search("   ")


async def test_other_embedder_is_refused(env: Env) -> None:
    with pytest.raises(EmbeddingMismatch, match="reindex"):
        await Searcher(
            env.redis, env.keys, env.settings.search, HashEmbedder(dims=64), env.info
        ).search("x")


async def test_access_counts_are_flushed_into_memories(env: Env) -> None:
    await env.put("tea", CORPUS["tea"])
    await env.indexed(1)
    for _ in range(3):
        await env.search("green tea", top_k=1)
    assert await flush_access_log(env.redis, env.keys, now=5.0) == 1
    doc = await env.redis.hmget(env.keys.doc("tea"), ["access_count", "last_accessed_at"])
    assert doc == [b"3", b"5.000000"]
    assert await flush_access_log(env.redis, env.keys) == 0


async def test_hit_counts_are_sent_in_the_background_and_coalesced(env: Env) -> None:
    counter = HitCounter(env.redis, env.keys)
    counter.count(["tea", "deploy"])
    counter.count(["tea"])  # queued while the first round trip has not been sent
    assert await env.redis.hlen(env.keys.access_log) == 0  # count() does not wait
    await counter.drain()
    assert await env.redis.hgetall(env.keys.access_log) == {b"tea": b"2", b"deploy": b"1"}
    counter.count([])
    await counter.drain()  # nothing pending: returns at once


async def test_hit_counts_of_many_searches_share_one_round_trip(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    count_hits = access.scripts.count_hits

    async def counted(redis: Any, *, access_log: str, counts: list[str]) -> int:
        calls.append(len(counts) // 2)
        return await count_hits(redis, access_log=access_log, counts=counts)

    monkeypatch.setattr(access.scripts, "count_hits", counted)
    counter = HitCounter(env.redis, env.keys, coalesce_s=0.05)
    for search in range(3):  # three searches within the window, one memory in all
        counter.count([f"m{search}-{n}" for n in range(400)] + ["hot"])
    await counter.drain()
    assert calls == [500, 500, 201]  # 1,201 memories: chunks of 500, one window
    log = await env.redis.hgetall(env.keys.access_log)
    assert len(log) == 1201 and log[b"hot"] == b"3" and log[b"m2-399"] == b"1"


async def test_a_failed_hit_count_is_logged_and_the_search_keeps_its_answer(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    await env.put("tea", CORPUS["tea"])
    await env.indexed(1)
    searcher = env.searcher
    await env.redis.set(env.keys.access_log, "not a hash")  # every HINCRBY fails
    assert [h.id for h in await searcher.search("green tea", top_k=1)] == ["tea"]
    await searcher.aclose()
    assert "could not count 1 search hits" in caplog.text
    assert await env.redis.get(env.keys.access_log) == b"not a hash"


async def test_flush_skips_deleted_memories(env: Env) -> None:
    await env.redis.hincrby(env.keys.access_log, "ghost", 2)
    assert await flush_access_log(env.redis, env.keys) == 1
    assert not await env.redis.exists(env.keys.doc("ghost"))


async def test_a_flush_reads_and_folds_one_batch_and_loses_no_hit(env: Env) -> None:
    async with env.redis.pipeline(transaction=False) as pipe:
        for n in range(2500):
            pipe.hset(env.keys.doc(f"m{n}"), "content", f"memory {n}")
            pipe.hincrby(env.keys.access_log, f"m{n}", 2)
        await pipe.execute()
    assert await flush_access_log(env.redis, env.keys, batch=1000) == 1000
    assert await env.redis.hlen(env.keys.access_log) == 1500  # the rest waits its turn
    while await flush_access_log(env.redis, env.keys, batch=1000):
        pass
    async with env.redis.pipeline(transaction=False) as pipe:
        for n in range(2500):
            pipe.hget(env.keys.doc(f"m{n}"), "access_count")
        assert set(await pipe.execute()) == {b"2"}  # every hit folded in, exactly once


async def test_list_conflicts_returns_flagged_memories(env: Env) -> None:
    await env.put("old", "the standup is at 9:00")
    await env.put("new", "the standup is at 10:00", conflicts_with=["old"])
    await env.indexed(2)
    records = await list_conflicts(env.redis, env.keys)
    assert [r.id for r in records] == ["new"]
    assert records[0].conflicts_with == ("old",)


async def test_keyword_scores_recover_after_memories_are_updated(env: Env) -> None:
    # RediSearch scores BM25 wrongly for documents updated since its last GC
    # (a refine step, an access flush or an archive updates a memory). The
    # embedded server runs the GC every 2 s (server/launcher.py); with the
    # default 30 s this test times out.
    for n in range(40):
        await env.put(f"m{n}", f"note {n} about deploys, rollbacks and the billing service {n % 7}")
    await env.indexed(40)

    async def scores() -> dict[str, float]:
        hits = await env.searcher.search(
            "billing rollbacks 3", mode="keyword", top_k=20, record_access=False
        )
        return {h.id: h.bm25 or 0.0 for h in hits}  # raw: scaled scores would hide it

    before = await scores()
    async with env.redis.pipeline(transaction=False) as pipe:
        for n in range(40):  # re-indexes every memory, as a refine pass does
            pipe.hset(env.keys.doc(f"m{n}"), "refine", "done")
        await pipe.execute()

    async def recovered() -> bool:
        # Before the GC the updated memories score ~70x too high; after it, as
        # before the update (within a few percent: the GC keeps some counts).
        after = await scores()
        return after.keys() == before.keys() and all(
            abs(after[k] - before[k]) < 0.25 * before[k] for k in before
        )

    await wait_for(recovered, timeout_s=10)


async def test_nonsense_finds_nothing_and_meaning_still_finds(settings: Settings) -> None:
    # The default models and their floors (local static vector, MiniLM), real pipeline.
    from hindsight_redis import AsyncMemoryClient, Worker

    local = settings.model_copy(update={"embedder": "local", "filters_enabled": False})
    async with AsyncMemoryClient(local) as client:
        await client.write_many([{"content": text} for text in CORPUS.values()])
        await Worker(local).run_async(burst=True)
        for nonsense in ("🚀", "asdkjh qwpoe zzkx", "xyzzy plugh"):
            for mode in ("hybrid", "vector"):
                hits = await client.search(nonsense, top_k=5, mode=mode)
                assert len(hits) < 5, (nonsense, mode, [h.content for h in hits])
        hits = await client.search("what does Bob drink after lunch?", top_k=5)
        assert hits and hits[0].content == CORPUS["coffee"]


async def test_an_english_question_finds_a_chinese_memory_and_back(settings: Settings) -> None:
    from hindsight_redis import AsyncMemoryClient, Worker

    local = settings.model_copy(update={"embedder": "local", "filters_enabled": False})
    chinese = "北京办公室的打印机密码是 4821"
    english = "The design review happens every Thursday afternoon"
    others = [
        "The printer on the second floor is out of toner",
        "Our password manager is 1Password for all employees",
        "Beijing weather is cold in January",
        "会议室的投影仪坏了，需要报修",
        "下周一开始使用新的考勤系统",
    ]
    async with AsyncMemoryClient(local) as client:
        receipts = await client.write_many([{"content": t} for t in [chinese, english, *others]])
        await Worker(local).run_async(burst=True)
        hits = await client.search("printer password Beijing office", top_k=3)
        assert hits[0].id == receipts[0].id, [h.content for h in hits]
        hits = await client.search("设计评审在星期几", top_k=3)
        assert receipts[1].id in [h.id for h in hits], [h.content for h in hits]
    off = local.model_copy(update={"hybrid_cross_language": False})
    async with AsyncMemoryClient(off) as client:
        hits = await client.search("printer password Beijing office", top_k=3)
        assert not hits or hits[0].id != receipts[0].id  # what the cross-language ranking buys


async def test_common_terms_only_score_once_the_searcher_has_counted_them(
    settings: Settings, redis: Redis
) -> None:
    tuned = settings.model_copy(update={"keyword_common_share": 0.5, "keyword_common_min_docs": 0})
    env = await open_index_env(redis, tuned)
    for n in range(10):
        await env.put(f"weekly{n}", f"the weekly status report for team {n}")
    await env.put("both", "the quarterly budget report")
    await env.put("rare", "the quarterly budget")
    await env.indexed(12)
    searcher = env.searcher
    first = [h.id for h in await searcher.search("quarterly report", mode="keyword", top_k=12)]
    assert set(first[:2]) == {"both", "rare"} and "weekly0" in first  # not counted yet

    async def counted() -> bool:
        return searcher.term_stats.common(["quarterly", "report"]) == {"report"}

    await wait_for(counted)
    second = await searcher.search("quarterly report", mode="keyword", top_k=12)
    assert {h.id for h in second} == {"both", "rare"}  # "report" scores, selects nothing


async def test_a_chinese_question_finds_its_memory_worded_differently(settings: Settings) -> None:
    from hindsight_redis import AsyncMemoryClient, Worker

    local = settings.model_copy(update={"embedder": "local"})
    memories = [
        "小王对芒果过敏，聚餐点菜时要避开",
        "我的自行车停在小区东门的车棚里",
        "小王下周要去广州出差",
        "我每天骑自行车上班",
        "会议室的投影仪坏了，需要报修",
        "东门的快递柜周末不开",
    ]
    questions = {"小王不能吃什么水果": 0, "单车放在哪里了": 1}
    async with AsyncMemoryClient(local) as client:
        receipts = await client.write_many([{"content": t} for t in memories])
        await Worker(local).run_async(burst=True)
        for question, wanted in questions.items():
            hits = await client.search(question, top_k=3)
            assert receipts[wanted].id in [h.id for h in hits], (
                question,
                [h.content for h in hits],
            )


async def test_a_chinese_keyword_search_finds_a_synonym_below_the_word(env: Env) -> None:
    await env.put("word", "昨晚系统报警了三次")
    await env.put("synonym", "昨晚系统告警了三次")
    await env.put("other", "昨晚系统升级了三次")
    await env.indexed(3)
    assert await env.search("报警", mode="keyword") == ["word", "synonym"]


async def test_a_weighted_term_scores_its_share_of_the_term(redis: Redis) -> None:
    index, prefix = "synonym-weight-test", "synonym-weight-test:"
    await redis.execute_command(
        "FT.CREATE", index, "ON", "HASH", "PREFIX", "1", prefix, "SCHEMA", "content", "TEXT"
    )
    try:
        await redis.hset(f"{prefix}1", "content", "alpha beta")  # type: ignore[misc]
        await redis.hset(f"{prefix}2", "content", "gamma delta")  # type: ignore[misc]

        async def score(query: str) -> float:
            reply = await redis.execute_command(
                "FT.SEARCH",
                index,
                query,
                "SCORER",
                "BM25STD",
                "WITHSCORES",
                "NOCONTENT",
                "DIALECT",
                "2",
            )
            if isinstance(reply, dict):  # RESP3
                return float(reply[b"results"][0][b"score"])
            return float(reply[2])

        plain = await score(keyword_query(["alpha", "zeta"], None) or "")
        weighted = await score(keyword_query(["zeta", "alpha"], None, synonyms={"alpha"}) or "")
        assert weighted == pytest.approx(SYNONYM_WEIGHT * plain)
    finally:
        await redis.execute_command("FT.DROPINDEX", index, "DD")
