"""The public surface: one definition of a write and a search, the same in the library,
the CLI, the MCP tools and the LangChain tools."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import threading

import pytest

import hindsight_redis
from hindsight_redis import AsyncMemoryClient, ConfigError, MemoryClient, Settings
from hindsight_redis.cli import build_parser
from hindsight_redis.client.pool import PoolOperations
from hindsight_redis.core.requests import SEARCH_OPTIONS, WRITE_FIELDS, SearchOptions, WriteOptions
from hindsight_redis.settings import load_settings


def _public_coroutines(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }


def test_all_is_sorted_and_complete() -> None:
    names = hindsight_redis.__all__
    assert names == sorted(names)
    defined = {  # imported when the package is (the errors), or on first use (the rest)
        name
        for name, value in vars(hindsight_redis).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("hindsight_")
    }
    assert set(names) == defined | set(hindsight_redis._LAZY)
    for name in names:  # each resolves to the object its module defines
        value = getattr(hindsight_redis, name)
        assert value.__name__ == name and value.__module__ == hindsight_redis._LAZY.get(
            name, "hindsight_redis.errors"
        )
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = hindsight_redis.Nope


def test_the_sync_client_has_every_method_with_the_same_signature() -> None:
    lifecycle = {"connect", "aclose", "__aenter__", "__aexit__"}
    async_methods = {k: v for k, v in _public_coroutines(AsyncMemoryClient).items()}
    for name, signature in async_methods.items():
        if name in lifecycle:
            continue
        method = getattr(MemoryClient, name)
        assert inspect.signature(method) == signature, name
        assert method.__doc__ == getattr(AsyncMemoryClient, name).__doc__
        assert not inspect.iscoroutinefunction(method)


def test_write_and_search_take_their_request_options() -> None:
    for method, options in (
        (AsyncMemoryClient.write, WriteOptions),
        (AsyncMemoryClient.search, SearchOptions),
    ):
        parameters = inspect.signature(method).parameters
        assert [p.kind for p in parameters.values()][-1] is inspect.Parameter.VAR_KEYWORD
        assert parameters["options"].annotation == f"Unpack[{options.__name__}]"
    assert WRITE_FIELDS[0] == "content" and set(WRITE_FIELDS[1:]) == set(
        WriteOptions.__annotations__
    )
    assert set(SEARCH_OPTIONS) == set(SearchOptions.__annotations__)


def test_the_client_offers_the_pool_operations_with_their_own_signatures() -> None:
    for name in ("sweep", "stats", "export", "resolve_conflict", "reindex"):
        assert getattr(AsyncMemoryClient, name) is getattr(PoolOperations, name)
        assert getattr(MemoryClient, name).__doc__ == getattr(PoolOperations, name).__doc__


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices[name]
    return found


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    common = {"redis_url", "namespace", "profile", "server_dir", "server_port", "embedder"}
    common |= {"as_agent"}
    return {a.dest for a in parser._actions if a.dest not in ("help", *common)}


def test_the_cli_write_and_search_options_are_the_library_arguments() -> None:
    assert _dests(_subparser("write")) == set(WRITE_FIELDS)
    assert _dests(_subparser("search")) - {"json"} == {"query", *SEARCH_OPTIONS}


def test_the_mcp_tools_take_the_library_arguments(settings_for_mcp: Settings) -> None:
    from hindsight_redis.service.mcp import build_server

    server, _ = build_server(settings_for_mcp)
    tools = {t.name: t for t in asyncio.run(server.list_tools())}
    assert tuple(tools["memory_write"].inputSchema["properties"]) == WRITE_FIELDS
    # Who the caller is comes from its token or settings, never from an argument.
    assert tuple(tools["memory_search"].inputSchema["properties"]) == ("query", *SEARCH_OPTIONS)
    described = tools["memory_search"].inputSchema["properties"]["occurred_since"]
    assert "happened" in described["description"]


@pytest.fixture
def settings_for_mcp() -> Settings:
    return Settings(redis_url="redis://127.0.0.1:1", embedder="hash")


def test_bad_settings_raise_config_error_and_start_no_thread() -> None:
    before = threading.active_count()
    with pytest.raises(ConfigError, match="max_backlog"):
        load_settings(max_backlog=-1)
    with pytest.raises(ValueError):
        MemoryClient(
            Settings(profile="durable", redis_url="redis://x").model_copy(
                update={"profile": "nonsense"}
            )
        )
    assert threading.active_count() == before


def test_text_for_people_aligns_wide_characters_and_ages() -> None:
    from hindsight_redis.core.models import SearchHit
    from hindsight_redis.ops.render import age, fit, hits_table, stats_lines

    assert (
        fit("用户王芳", 8) == "用户王芳"
        and fit("用户王芳", 6) == "用户… "
        and fit("ab", 4) == "ab  "
    )
    assert fit("用户王芳对花生过敏", 7) == "用户王…"
    assert [age(0, now=n) for n in (5, 90, 7200, 86400 * 3, 86400 * 65, 86400 * 800)] == [
        "5s",
        "1m",
        "2h",
        "3d",
        "2mo",
        "2y",
    ]
    hit = SearchHit(
        "m1",
        "用户喜欢用中文回答问题",
        "",
        "support",
        "",
        "",
        (),
        created_at=0.0,
        vector=0.5,
        keyword=None,
        fused=0.75,
    )
    table = hits_table([hit], now=60.0).splitlines()
    assert table[1].split()[:5] == ["1", "0.75", "0.50", "-", "-"] and "support" in table[1]
    assert hits_table([]) == "no memory matches"
    lines = stats_lines({"accepted": 1200, "dropped": {"rule:ack": 3, "total": 3}, "workers": []})
    assert "accepted        1,200" in lines and "(rule:ack 3)" in lines and "none live" in lines
