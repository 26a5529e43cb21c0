"""A write's ``context``: validated, kept, carried and stored; ``write_many``'s session tails."""

from __future__ import annotations

import argparse

import msgpack
import pytest

from hindsight_redis.core.codec import EVENT_FIELD, decode_event, encode_event
from hindsight_redis.core.context import (
    CONTEXT_KEPT_BYTES,
    MAX_CONTEXT_CHARS,
    contextual_text,
    kept_context,
)
from hindsight_redis.core.documents import memory_document, record_from_fields
from hindsight_redis.core.requests import parse_write
from hindsight_redis.errors import InvalidMemory
from hindsight_redis.write.session_tails import SessionTails, context_depth


def _event(**fields: object):  # type: ignore[no-untyped-def]
    return parse_write(
        {"content": "It is on Thursday", **fields},
        namespace="team-a",
        max_content_chars=100,
        max_tags=3,
    ).event


def _document(event) -> dict[str, str | bytes]:  # type: ignore[no-untyped-def]
    return memory_document(
        event,
        content=event.content,
        vector_field="vec",
        vector_datatype="float32",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5, "context must be a string, got int"),
        (["a"], "context must be a string"),
        ("x" * (MAX_CONTEXT_CHARS + 1), f"context is {MAX_CONTEXT_CHARS + 1} characters, limit"),
        ("before \ud800 after", "context holds a lone surrogate"),
    ],
)
def test_a_bad_context_is_refused_with_a_clear_message(value: object, message: str) -> None:
    with pytest.raises(InvalidMemory, match=message):
        _event(context=value)


def test_a_context_is_kept_as_given_nul_and_all_and_blank_is_none() -> None:
    assert _event(context="When is the review?").context == "When is the review?"
    assert _event(context="a\x00b").context == "a\x00b"  # as content: stored byte for byte
    assert _event(context="  \n ").context is None
    assert _event(context=None).context is None
    assert _event().context is None


def test_a_long_context_keeps_its_end_within_the_byte_budget() -> None:
    words = " ".join(f"word{n}" for n in range(1000))
    kept = _event(context=words[:MAX_CONTEXT_CHARS]).context
    assert kept is not None and words[:MAX_CONTEXT_CHARS].endswith(kept)
    assert CONTEXT_KEPT_BYTES - 40 < len(kept.encode()) <= CONTEXT_KEPT_BYTES
    assert kept.split(" ")[0].startswith("word")  # cut at a word, not inside one
    chinese = "会议在周二" * 200  # 3 bytes a character: never split inside one
    tail = kept_context(chinese)
    assert chinese.endswith(tail) and len(tail.encode()) <= CONTEXT_KEPT_BYTES
    assert len(tail) == CONTEXT_KEPT_BYTES // 3


def test_contextual_text_puts_the_content_first() -> None:
    assert contextual_text("It is on Thursday", "When is the review?") == (
        "It is on Thursday When is the review?"
    )
    assert contextual_text("It is on Thursday", None) == "It is on Thursday"
    assert contextual_text("It is on Thursday", "") == "It is on Thursday"


def test_the_context_travels_the_stream_and_old_events_still_decode() -> None:
    event = _event(context="When is the review?", session_id="s1")
    assert decode_event({EVENT_FIELD: encode_event(event)}) == event
    plain = _event()
    assert "context" not in msgpack.unpackb(encode_event(plain))  # older workers read it
    old = msgpack.unpackb(encode_event(plain))
    assert decode_event({EVENT_FIELD: msgpack.packb(old)}).context is None


def test_the_memory_hash_stores_the_context_only_when_set_and_get_shows_it() -> None:
    doc = _document(_event(context="When is the review?"))
    assert doc["context"] == "When is the review?"
    assert doc["content"] == "It is on Thursday"
    assert record_from_fields("m", doc).context == "When is the review?"
    bare = _document(_event())
    assert "context" not in bare and record_from_fields("m", bare).context is None


def _items(*turns: tuple[str, str | None]) -> list[dict[str, object]]:
    return [
        {"content": text, **({"session_id": session} if session else {})} for text, session in turns
    ]


def test_session_tails_fill_contexts_from_the_previous_items_of_each_session() -> None:
    tails = SessionTails()
    items = _items(("a1", "A"), ("b1", "B"), ("a2", "A"), ("x", None), ("a3", "A"))
    filled, seen = tails.fill(items, 2, caller="")
    assert [item.get("context") for item in filled] == [None, None, "a1", None, "a1 a2"]
    assert items[2].get("context") is None  # the caller's dicts are left alone
    assert len(tails) == 0  # nothing remembered before the batch is accepted
    tails.remember(seen)
    again, _ = tails.fill(_items(("a4", "A"), ("b2", "B")), 2, caller="")
    assert [item["context"] for item in again] == ["a2 a3", "b1"]


def test_an_own_context_wins_and_still_counts_as_a_previous_turn() -> None:
    items = [
        {"content": "a1", "session_id": "A", "context": "given"},
        {"content": "a2", "session_id": "A", "context": ""},
        {"content": "a3", "session_id": "A"},
    ]
    filled, _ = SessionTails().fill(items, 3, caller="")
    assert [item["context"] for item in filled] == ["given", "", "a1 a2"]


def test_private_contents_are_context_only_for_their_owner() -> None:
    items = [
        {"content": "secret", "session_id": "A", "visibility": "private", "agent_id": "bob"},
        {"content": "public", "session_id": "A"},
        {"content": "mine", "session_id": "A", "visibility": "private"},
        {"content": "bob's", "session_id": "A", "visibility": "private", "agent_id": "bob"},
    ]
    filled, _ = SessionTails().fill(items, 2, caller="alice")
    assert [item.get("context") for item in filled] == [None, None, None, "secret"]


def test_session_tails_forget_the_least_recent_sessions() -> None:
    tails = SessionTails(max_sessions=2)
    for session in ("A", "B", "C"):
        tails.remember(tails.fill(_items((session.lower(), session)), 1, caller="")[1])
    assert len(tails) == 2
    filled, _ = tails.fill(_items(("a2", "A"), ("c2", "C")), 1, caller="")
    assert [item.get("context") for item in filled] == [None, "c"]


@pytest.mark.parametrize("value", [-1, 17, 1.5, True, "2", None])
def test_a_bad_context_from_previous_is_refused(value: object) -> None:
    with pytest.raises(InvalidMemory, match="context_from_previous must be"):
        context_depth(value)


def test_the_cli_write_takes_a_context() -> None:
    from hindsight_redis.cli.app import build_parser

    args = build_parser().parse_args(["write", "It is on Thursday", "--context", "When?"])
    assert isinstance(args, argparse.Namespace) and args.context == "When?"
