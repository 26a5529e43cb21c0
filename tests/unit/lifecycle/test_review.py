"""The pure side of conflict review: the newer-first rule and the tool specs' one schema."""

from __future__ import annotations

import asyncio

from hindsight_redis.core.models import SearchHit
from hindsight_redis.language.answer_type import asks_about_the_past
from hindsight_redis.lifecycle.review import resolution_from_fields
from hindsight_redis.search.rerank import newer_first
from hindsight_redis.service.tools import TOOLS
from hindsight_redis.settings import Settings


def prefer_newer(hits: list[SearchHit], query: str) -> list[SearchHit]:
    """The newer-first rule for the question ``query``."""
    return newer_first.prefer_newer(hits, about_the_past=asks_about_the_past(query))


def _hit(memory_id: str, created_at: float, *conflicts: str) -> SearchHit:
    return SearchHit(memory_id, memory_id, "", "", "", "", (), created_at, conflicts_with=conflicts)


def test_the_newer_of_a_conflicting_pair_moves_above_the_older() -> None:
    hits = [_hit("old", 1.0, "new"), _hit("x", 5.0), _hit("new", 2.0, "old")]
    assert [h.id for h in prefer_newer(hits, "what is the deploy window?")] == ["new", "old", "x"]


def test_only_the_order_changes_and_questions_about_the_past_keep_it() -> None:
    hits = [_hit("a", 1.0, "b", "c"), _hit("b", 2.0, "a"), _hit("c", 3.0, "a")]
    reordered = prefer_newer(hits, "current owner")
    assert [h.id for h in reordered] == ["c", "b", "a"]  # each newer above its older partner
    for past in ("what was it before?", "how did it change", "它以前是什么"):
        assert asks_about_the_past(past)
        assert prefer_newer(hits, past) == hits
    assert not asks_about_the_past("where does alice live now?")
    plain = [_hit("a", 2.0), _hit("b", 1.0)]
    assert prefer_newer(plain, "x") == plain


def test_a_log_entry_reads_back_as_a_resolution() -> None:
    entry = {
        "action": "resolve",
        "memory": "m1",
        "other": "m2",
        "keep": "new",
        "kept": "m1",
        "archived": "m2",
        "by": "ops",
        "at": "12.5",
        "note": "why",
    }
    found = resolution_from_fields("1-0", entry)
    assert (found.kept, found.archived, found.resolved_at, found.keep) == (
        ("m1",),
        "m2",
        12.5,
        "new",
    )
    assert resolution_from_fields("2-0", {"action": "undo", "keep": "?"}).keep == ""


def test_the_mcp_tools_are_the_specs() -> None:
    from hindsight_redis.service.mcp import build_server

    server, _ = build_server(Settings(redis_url="redis://127.0.0.1:1", embedder="hash"))
    tools = {t.name: t for t in asyncio.run(server.list_tools())}
    assert list(tools) == [spec.name for spec in TOOLS]
    for spec in TOOLS:
        tool = tools[spec.name]
        assert tool.description == spec.description and tool.title == spec.title
        expected = spec.arguments.model_json_schema()
        assert tool.inputSchema["properties"] == expected.get("properties", {})
        assert set(tool.inputSchema.get("required", [])) == set(expected.get("required", []))
        assert bool(tool.annotations and tool.annotations.readOnlyHint) == spec.read_only


def test_a_newer_memory_far_less_relevant_stays_below() -> None:
    def hit(memory_id: str, at: float, vector: float, bm25: float, other: str) -> SearchHit:
        return SearchHit(
            memory_id, "", "", "", "", "", (), at, vector=vector, bm25=bm25, conflicts_with=(other,)
        )

    exact = hit("old", 1.0, 1.0, 9.0, "new")
    assert [h.id for h in prefer_newer([exact, hit("new", 2.0, 0.8, 9.0, "old")], "x")] == [
        "old",
        "new",
    ]
    assert [h.id for h in prefer_newer([exact, hit("new", 2.0, 0.99, 6.0, "old")], "x")] == [
        "old",
        "new",
    ]
    assert [h.id for h in prefer_newer([exact, hit("new", 2.0, 0.98, 8.5, "old")], "x")] == [
        "new",
        "old",
    ]
