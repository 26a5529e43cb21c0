"""The pure parts of the MCP resources and prompts: addresses, error codes, the recall budget."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import McpError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST

from hindsight_redis.errors import InvalidMemory, NotFound, RedisUnavailable
from hindsight_redis.language.tokens import count_tokens
from hindsight_redis.service.prompts import (
    RECALL_HEAD,
    RECALL_NONE,
    RECALL_TOO_LONG,
    fit,
    line,
    remember_text,
)
from hindsight_redis.service.resources import RESOURCE_NOT_FOUND, mcp_error, parse, uri
from hindsight_redis.service.tools import WriteArguments


@pytest.mark.parametrize("namespace", ["test", "Team A", "a/b", "ünïcode", "x%y", "a:b@c"])
def test_addresses_carry_any_namespace_there_and_back(namespace: str) -> None:
    assert parse(uri(namespace, "stats")) == (namespace, "stats")
    assert parse(uri(namespace, "0f" * 16)) == (namespace, "0f" * 16)


@pytest.mark.parametrize(
    "address",
    ["file:///etc/passwd", "memory://ns", "memory://ns/", "memory://ns/a/b", "memory:///x"],
)
def test_other_addresses_are_not_found(address: str) -> None:
    with pytest.raises(McpError) as error:
        parse(address)
    assert error.value.error.code == RESOURCE_NOT_FOUND


def test_errors_map_to_mcp_codes() -> None:
    assert mcp_error("refused").error.code == INVALID_REQUEST
    assert mcp_error("x", NotFound("x")).error.code == RESOURCE_NOT_FOUND
    assert mcp_error("x", InvalidMemory("x")).error.code == INVALID_PARAMS
    assert mcp_error("x", RedisUnavailable("x")).error.code == INTERNAL_ERROR


def _hit(n: int, content: str, conflicts: tuple[str, ...] = ()) -> dict[str, object]:
    return {
        "id": f"{n:032x}",
        "content": content,
        "agent_id": "w",
        "created_at": 1_780_000_000.0,
        "occurred_at": None,
        "conflicts_with": list(conflicts),
    }


def test_recall_fits_its_budget_exactly_and_skips_what_is_too_long() -> None:
    short = [_hit(n, f"Fact number {n} about the billing deploy window") for n in range(30)]
    long = _hit(99, "word " * 2000)
    hits = [short[0], long, *short[1:]]
    for budget in (100, 150, 333, 800):
        text = fit(hits, budget)
        assert text.startswith(RECALL_HEAD) and count_tokens(text) <= budget
        kept = text.splitlines()[2:]
        assert kept == [line(h) for h in short[: len(kept)]]  # rank order, the long one skipped
        more = "\n".join([text, line(short[len(kept)])])
        assert count_tokens(more) > budget  # the next one would not have fit
    assert fit([], 800) == RECALL_NONE
    assert fit([long], 800) == RECALL_TOO_LONG
    assert count_tokens(RECALL_NONE) < 100 and count_tokens(RECALL_TOO_LONG) < 100


def test_a_recall_line_says_when_who_and_what_it_contradicts() -> None:
    hit = _hit(1, "The window is Thursday", ("ab" * 16,))
    hit["occurred_at"] = 1_683_554_160.0
    assert line(hit) == (
        f"- (2023-05-08, by w) The window is Thursday [id {1:032x}; contradicts {'ab' * 16}]"
    )


def test_remember_lists_every_argument_of_memory_write() -> None:
    text = remember_text()
    for name in WriteArguments.model_fields:
        assert f"\n- {name}" in text
