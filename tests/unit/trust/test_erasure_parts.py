"""Erasure's pure parts: what a selector names, the arguments it refuses, the keys it
derives from another room's (which must stay the same)."""

from __future__ import annotations

import json

import pytest

from hindsight_redis.client.items import path_digest, path_json
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.errors import InvalidArgument
from hindsight_redis.trust.copies import item_members_key
from hindsight_redis.trust.erasure import MAX_VALUES, selector_of


def test_a_selector_names_the_union_of_its_criteria() -> None:
    selector = selector_of(["m1"], agent_id="alice-bot", tag=["user:alice", "user:al"])
    assert selector.matches("m1")
    assert selector.matches("m2", agent_id="alice-bot")
    assert selector.matches("m3", tags=("team:x", "user:al"))
    assert not selector.matches("m4", agent_id="bob", tags=("user:bob",), session_id="s")
    event = MemoryEvent(event_id="m5", namespace="n", content="x", tags=("user:alice",))
    assert selector.matches_event(event)
    assert selector.described() == {
        "ids": ["m1"],
        "agent_id": ["alice-bot"],
        "tag": ["user:al", "user:alice"],
    }
    # an empty attribute never matches an empty criterion
    assert not selector_of(source="chat").matches("m6", source="")


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({}, "needs ids"),
        ({"tag": ""}, "tag must be"),
        ({"agent_id": ["ok", 7]}, "agent_id must be"),
        ({"session_id": "a\x00b"}, "session_id"),
        ({"ids": ["x:y"]}, "invalid memory id"),
        ({"ids": [f"m{n}" for n in range(MAX_VALUES + 1)]}, "at most"),
    ],
)
def test_bad_criteria_are_refused(arguments: dict[str, object], words: str) -> None:
    with pytest.raises(InvalidArgument, match=words):
        selector_of(**arguments)  # type: ignore[arg-type]


def test_the_item_key_set_is_the_items_own() -> None:
    keys = Keys("p", "n")
    path = ("prefs", "alice")
    assert item_members_key(keys, path_json(path)) == keys.items_of(path_digest(path))
    assert path_json(path) == json.dumps(list(path), separators=(",", ":"))
