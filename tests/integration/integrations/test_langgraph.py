"""``HindsightStore`` with the real ``langgraph`` package: a graph whose node writes and
reads memories through ``store`` (deterministic, no LLM), and LangGraph's own store
expectations, checked side by side with its reference ``InMemoryStore``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError, PutOp
from langgraph.store.memory import InMemoryStore

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.integrations.langgraph import HindsightStore, path_tags
from tests.integration.helpers import Drain


@pytest.fixture
def store(settings: Settings) -> Iterator[HindsightStore]:
    with HindsightStore(settings) as opened:
        yield opened


class State(TypedDict, total=False):
    user: str
    fact: str
    question: str
    recalled: list[str]


def _graph(store: BaseStore) -> Any:
    """remember: store the state's fact, if any; recall: search the user's memories."""

    def remember(state: State, *, store: BaseStore) -> State:
        if state.get("fact"):
            store.put(
                ("users", state["user"]), "fact-1", {"content": state["fact"], "kind": "pref"}
            )
        return {}

    def recall(state: State, *, store: BaseStore) -> State:
        found = store.search(("users", state["user"]), query=state["question"], limit=3)
        return {"recalled": [item.value["content"] for item in found]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


async def test_a_graph_stores_a_value_and_finds_it_in_a_later_run(
    settings: Settings, drain: Drain
) -> None:
    with HindsightStore(settings) as first:
        fact = "Alice prefers green tea in the morning, never coffee"
        out = await _graph(first).ainvoke({"user": "alice", "fact": fact, "question": "tea"})
        assert (await first.aget(("users", "alice"), "fact-1")).value["content"] == fact  # type: ignore[union-attr]
        assert "recalled" in out  # the first run may not find it yet: no worker ran
    await drain()
    with HindsightStore(settings) as second:  # a new process would do the same
        graph = _graph(second)
        again = graph.invoke({"user": "alice", "question": "what does alice drink, tea?"})
        assert again["recalled"] == [fact]
        other = await graph.ainvoke({"user": "bob", "question": "what does alice drink, tea?"})
        assert other["recalled"] == []  # another namespace of the graph


async def test_get_reads_a_put_back_before_any_worker_ran(store: HindsightStore) -> None:
    value = {"content": "The staging cluster is eu-west-3", "nested": {"n": [1, 2]}, "ok": True}
    await store.aput(("ops",), "staging", value)
    item = await store.aget(("ops",), "staging")
    assert item is not None and item.value == value and item.namespace == ("ops",)
    assert item.created_at == item.updated_at and item.created_at.tzinfo is not None
    assert store.get(("ops",), "absent") is None


async def test_query_search_scopes_by_prefix_filters_values_and_scores(
    store: HindsightStore, drain: Drain
) -> None:
    same = "Prefers answers in Chinese, with code in English"
    await store.aput(("users", "alice", "prefs"), "lang", {"content": same, "level": 3})
    await store.aput(("users", "bob", "prefs"), "lang", {"content": same, "level": 1})
    await store.aput(("teams", "core"), "lang", {"content": same, "level": 2})
    await drain()
    # One text under three namespaces: three memories (never merged across namespaces).
    users = await store.asearch(("users",), query="which language for answers?")
    assert {i.namespace for i in users} == {("users", "alice", "prefs"), ("users", "bob", "prefs")}
    assert all(i.score is not None and 0 < i.score <= 1 for i in users)
    picked = store.search(("users",), query="language answers", filter={"level": {"$gt": 2}})
    assert [i.namespace[1] for i in picked] == ["alice"]
    everywhere = store.search((), query="language answers Chinese", limit=10)
    assert len(everywhere) == 3
    assert store.search(("users",), query="language answers", limit=1, offset=1)[0].key == "lang"


async def test_a_new_version_replaces_the_old_memory_and_delete_archives_it(
    store: HindsightStore, client: AsyncMemoryClient, drain: Drain
) -> None:
    ns = ("users", "carol")
    await store.aput(ns, "city", {"content": "Carol lives in Lisbon near the river"})
    await drain()
    await store.aput(ns, "city", {"content": "Carol moved to Porto last spring"})
    await store.aput(ns, "unchanged", {"content": "Carol's manager is Dana Okafor", "v": 1})
    await store.aput(ns, "unchanged", {"content": "Carol's manager is Dana Okafor", "v": 2})
    await drain()
    found = await store.asearch(ns, query="where does Carol live? Lisbon or Porto")
    assert [i.value["content"] for i in found if i.key == "city"] == [
        "Carol moved to Porto last spring"
    ]
    assert (await store.aget(ns, "unchanged")).value["v"] == 2  # type: ignore[union-attr]
    assert await client.conflicts() == []  # a replaced version is not a contradiction
    hits = await client.search("Carol Lisbon river", top_k=5)
    assert all("Lisbon" not in h.content for h in hits)  # the old version is archived
    await store.adelete(ns, "city")
    assert await store.aget(ns, "city") is None
    assert "city" not in [i.key for i in await store.asearch(ns, query="Carol Porto")]


async def test_a_version_replaced_before_it_was_indexed_is_archived_later(
    store: HindsightStore, client: AsyncMemoryClient, drain: Drain
) -> None:
    ns = ("notes",)
    await store.aput(ns, "k", {"content": "The release train leaves every Wednesday"})
    await store.aput(ns, "k", {"content": "The release train now leaves every Friday"})
    await drain()
    await store.asearch(ns, query="release train")  # a later call archives the stale one
    hits = await client.search("release train Wednesday", top_k=5)
    assert [h.content for h in hits] == ["The release train now leaves every Friday"]


async def test_index_false_keeps_the_item_without_a_memory(
    store: HindsightStore, client: AsyncMemoryClient, drain: Drain
) -> None:
    await store.aput(
        ("cfg",), "k", {"content": "The nightly backup runs at 02:00 UTC"}, index=False
    )
    await store.aput(
        ("cfg",), "f", {"title": "Deploy freeze", "body": "No deploys on Fridays"}, index=["body"]
    )
    await drain()
    assert [i.key for i in await store.asearch(("cfg",))] == ["k", "f"]
    assert all("backup" not in h.content for h in await client.search("nightly backup"))
    found = await store.asearch(("cfg",), query="deploys Fridays")
    assert [i.key for i in found] == ["f"]


# -- LangGraph's store expectations, side by side with its InMemoryStore ---------------

NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]


@pytest.fixture
def both(store: HindsightStore) -> list[BaseStore]:
    stores: list[BaseStore] = [InMemoryStore(), store]
    for s in stores:
        for i, ns in enumerate(NAMESPACES):
            s.put(ns, f"id_{i}", {"data": f"value_{i:02d}", "n": i, "tags": {"even": i % 2 == 0}})
    return stores


LIST_CASES: list[dict[str, Any]] = [
    {"prefix": ("a", "b")},
    {"suffix": ("f",)},
    {"prefix": ("a",), "suffix": ("f",)},
    {"prefix": ("a", "b"), "max_depth": 3},
    {"prefix": ("a", "b"), "limit": 2},
    {"prefix": ("a", "b"), "offset": 2},
    {"prefix": ("a", "*", "f")},
    {"suffix": ("*", "f")},
    {"prefix": ("nonexistent",)},
    {"prefix": ("users", "123")},
    {"max_depth": 2},
    {},
    {"prefix": ("*", "users"), "suffix": ("*", "settings")},
]


@pytest.mark.parametrize(
    "case", LIST_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
)
def test_list_namespaces_matches_the_reference_store(
    both: list[BaseStore], case: dict[str, Any]
) -> None:
    reference, ours = (s.list_namespaces(**case) for s in both)
    assert (
        ours == sorted(reference)
        if "limit" not in case and "offset" not in case
        else ours == reference
    )


SEARCH_CASES: list[dict[str, Any]] = [
    {"namespace_prefix": ("a",)},
    {"namespace_prefix": ("a", "b"), "filter": {"n": 3}},
    {"namespace_prefix": (), "filter": {"n": {"$gte": 5, "$lt": 8}}},
    {"namespace_prefix": (), "filter": {"tags": {"even": True}}},
    {"namespace_prefix": (), "filter": {"data": {"$ne": "value_00"}}, "limit": 3},
    {"namespace_prefix": ("users",), "limit": 1, "offset": 1},
]


@pytest.mark.parametrize("case", SEARCH_CASES, ids=str)
def test_search_without_a_query_matches_the_reference_store(
    both: list[BaseStore], case: dict[str, Any]
) -> None:
    options = dict(case)
    prefix = options.pop("namespace_prefix")
    want, have = (
        [(i.namespace, i.key, i.value, i.score) for i in s.search(prefix, **options)] for s in both
    )
    assert have == want


def test_batches_run_in_order_and_validate_namespaces(both: list[BaseStore]) -> None:
    for s in both:
        results = s.batch(
            [PutOp(("x",), "k", {"v": 1}), PutOp(("x",), "k", {"v": 2}), PutOp(("x",), "j", None)]
        )
        assert results == [None, None, None]
        assert s.get(("x",), "k").value == {"v": 2}  # type: ignore[union-attr]
        for bad in ((), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")):
            with pytest.raises(InvalidNamespaceError):
                s.put(bad, "foo", {"foo": "bar"})
        with pytest.raises(NotImplementedError):
            s.put(("x",), "t", {"v": 1}, ttl=5)
        s.delete(("x",), "k")
        assert s.get(("x",), "k") is None
    assert ("x",) not in both[1].list_namespaces()  # ours lists only namespaces with items


def test_the_tags_of_a_path_are_its_prefixes_and_partition() -> None:
    assert path_tags(("users", "alice")) == [
        "lg:",
        "lg:users",
        "lg:users/alice",
        "partition:lg:users/alice",
    ]
    odd = path_tags(("a/b", "c"))
    assert odd[1] == "lg:#" + odd[1][4:] and len(odd[-1]) < 128  # ambiguous labels: digests


async def test_an_item_merged_into_another_items_memory_is_found_through_it(
    store: HindsightStore, client: AsyncMemoryClient, drain: Drain
) -> None:
    text = "The billing-service-v2 deploy failed with ERR_CONN_RESET; bob rolled it back"
    await store.aput(("incidents",), "first", {"content": text})
    await drain()
    await store.aput(("incidents",), "second", {"content": text + "!"})
    await drain()
    second = await store.aget(("incidents",), "second")
    assert second is not None
    found = await store.asearch(("incidents",), query="ERR_CONN_RESET billing deploy")
    assert sorted(i.key for i in found) == ["first", "second"]
    assert len({h.id for h in await client.search("ERR_CONN_RESET", mode="keyword")}) == 1
