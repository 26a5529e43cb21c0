"""Validation of writes and the stream/document codecs (no Redis)."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from hindsight_redis.core.checks import check_timeout, event_id_for
from hindsight_redis.core.codec import EVENT_FIELD, decode_event, encode_event
from hindsight_redis.core.documents import record_from_fields
from hindsight_redis.core.requests import parse_write
from hindsight_redis.errors import InvalidMemory, PoisonMessage
from hindsight_redis.pipeline.commit import doc_from_candidate
from hindsight_redis.pipeline.stages.base import Candidate


def _event(**fields: object):  # type: ignore[no-untyped-def]
    return parse_write(
        {"content": "Alice prefers Chinese", **fields},
        namespace="team-a",
        max_content_chars=100,
        max_tags=3,
    ).event


def test_event_round_trips_through_msgpack() -> None:
    event = _event(agent_id="planner", tags=["user:alice", "lang"], importance=0.8, protected=True)
    assert decode_event({EVENT_FIELD: encode_event(event)}) == event


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"content": ""}, "must not be empty"),
        ({"content": "x" * 101}, "limit is 100"),
        ({"content": 5}, "must be a string"),
        ({"tags": "one"}, "list of strings"),
        ({"tags": ["a", "b", "c", "d"]}, "limit is 3"),
        ({"tags": [""]}, "empty"),
        ({"importance": 2}, "between 0 and 1"),
        ({"importance": True}, "number"),
        ({"protected": "yes"}, "true or false"),
        ({"agent_id": 7}, "agent_id must be a string"),
        ({"idempotency_key": ""}, "must not be empty"),
        ({"visibility": "public"}, "visibility"),
        ({"colour": "red"}, "unknown field"),
        ({"timeout": 5}, "unknown field"),
        ({"wait": "yes"}, "wait must be true or false"),
        ({"timeout_s": "5"}, "timeout_s must be a number"),
        ({"timeout_s": -1}, "finite number >= 0"),
        ({"timeout_s": float("nan")}, "finite number >= 0"),
        ({"timeout_s": True}, "timeout_s must be a number"),
    ],
)
def test_bad_writes_are_rejected_with_a_clear_message(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidMemory, match=message):
        _event(**fields)


def test_idempotency_key_gives_a_stable_id_per_namespace() -> None:
    assert event_id_for("a", "k1") == event_id_for("a", "k1")
    assert event_id_for("a", "k1") != event_id_for("b", "k1")
    assert event_id_for("a", None) != event_id_for("a", None)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {EVENT_FIELD: b"\xc1"},
        {EVENT_FIELD: msgpack.packb([1, 2])},
        {EVENT_FIELD: msgpack.packb({"version": 99})},
        {EVENT_FIELD: msgpack.packb({"version": 1, "evil": 1})},
        {EVENT_FIELD: msgpack.packb({"version": 1})},
    ],
)
def test_undecodable_entries_are_poison(fields: dict[bytes, bytes]) -> None:
    with pytest.raises(PoisonMessage):
        decode_event(fields)


def test_document_round_trips_to_a_record() -> None:
    event = _event(agent_id="planner", tags=["user:alice"], source="chat#7")
    candidate = Candidate(
        entry_id="1-0", event=event, content="summary", original="Alice prefers Chinese"
    )
    candidate.embedding = np.ones(4, dtype=np.float32) / 2
    candidate.write_score = 0.9
    doc = doc_from_candidate(candidate, vector_field="vec", vector_datatype="float16")
    assert doc["vec"] == (np.ones(4, dtype=np.float16) / 2).tobytes()
    assert "id" not in doc and "event_id" not in doc  # the key holds the id
    # Defaults are not stored: they read back as what they mean.
    for unstored in (
        "embedding_model",
        "embedding_dims",
        "access_count",
        "last_accessed_at",
        "lang",
        "script",
        "protected",
    ):
        assert unstored not in doc
    fields = {k: v for k, v in doc.items() if k != "vec"}
    record = record_from_fields(event.event_id, fields, ("local:model", 4))
    assert record.content == "summary" and record.original == "Alice prefers Chinese"
    assert record.tags == ("user:alice",) and record.sources == ("chat#7",)
    assert record.write_score == pytest.approx(0.9) and record.embedding_dims == 4
    assert record.embedding_model == "local:model" and record.access_count == 0
    assert record.last_accessed_at == record.created_at and not record.protected


@pytest.mark.parametrize("original", [None, "", "same text"])
def test_document_stores_no_original_unless_it_differs(original: str | None) -> None:
    candidate = Candidate(entry_id="1-0", event=_event(), content="same text", original=original)
    doc = doc_from_candidate(candidate, vector_field="vec", vector_datatype="float32")
    assert "original" not in doc
    assert record_from_fields("x", doc).original is None


def test_wait_timeout_defaults_only_when_not_given() -> None:
    assert check_timeout(None, 30.0) == 30.0
    assert check_timeout(None, 30.0) == 30.0
    assert check_timeout(0, 30.0) == 0.0  # zero means zero, not the default
    assert check_timeout(2.5, 30.0) == 2.5
