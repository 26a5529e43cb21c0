"""``occurred_at``: when a memory's event happened, validated, carried and filtered (no Redis)."""

from __future__ import annotations

import argparse
import math

import msgpack
import pytest

from hindsight_redis.cli.options import moment
from hindsight_redis.core.checks import search_filters
from hindsight_redis.core.codec import EVENT_FIELD, decode_event, encode_event
from hindsight_redis.core.documents import (
    HIT_FIELDS,
    hit_from_fields,
    memory_document,
    record_from_fields,
)
from hindsight_redis.core.models import SearchFilters, SearchHit
from hindsight_redis.core.requests import parse_write
from hindsight_redis.errors import InvalidMemory, InvalidQuery
from hindsight_redis.index.fields import attribute_names
from hindsight_redis.index.filters import build_filter
from hindsight_redis.ops.render import hits_table
from hindsight_redis.search.query import is_selective

MAY_8 = 1683554160.0  # 2023-05-08 13:56 UTC


def _event(**fields: object):  # type: ignore[no-untyped-def]
    return parse_write(
        {"content": "Alice moved to Berlin", **fields},
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
        ("2023-05-08", "occurred_at must be a finite number"),
        (True, "occurred_at must be a finite number"),
        (math.nan, "occurred_at must be a finite number"),
        (math.inf, "occurred_at must be a finite number"),
        (10**400, "occurred_at must be a finite number"),
        (MAY_8 * 1000, r"between years 1 and 9999, got .*\(milliseconds\? give seconds\)"),
        (-7e10, "between years 1 and 9999"),
    ],
)
def test_a_bad_occurred_at_is_refused_with_a_clear_message(value: object, message: str) -> None:
    with pytest.raises(InvalidMemory, match=message):
        _event(occurred_at=value)


def test_occurred_at_is_kept_as_seconds_even_before_1970() -> None:
    assert _event(occurred_at=int(MAY_8)).occurred_at == MAY_8
    assert _event(occurred_at=-86400.0).occurred_at == -86400.0  # 31 December 1969
    assert _event().occurred_at is None


def test_occurred_at_round_trips_the_stream_and_events_without_it_still_decode() -> None:
    event = _event(occurred_at=MAY_8)
    assert decode_event({EVENT_FIELD: encode_event(event)}) == event
    plain = _event()
    packed = msgpack.unpackb(encode_event(plain))
    assert "occurred_at" not in packed  # an older worker reads it: no field it does not know
    old = {k: v for k, v in packed.items() if k != "half_life_days"}  # as 0.1 encoded it
    assert decode_event({EVENT_FIELD: msgpack.packb(old)}).occurred_at is None


def test_the_memory_hash_holds_occurred_at_only_when_given() -> None:
    assert "occurred_at" not in _document(_event())  # an empty NUMERIC value fails indexing
    doc = _document(_event(occurred_at=MAY_8))
    assert doc["occurred_at"] == "1683554160.000000"
    assert record_from_fields("m1", doc).occurred_at == MAY_8
    assert record_from_fields("m1", _document(_event())).occurred_at is None
    assert "occurred_at" in HIT_FIELDS
    hit = hit_from_fields("m1", {name: doc.get(name) for name in HIT_FIELDS}, fused=0.5)
    assert hit.occurred_at == MAY_8


def test_occurred_filters_bound_occurred_at_and_are_selective() -> None:
    filters = search_filters(occurred_since=10, occurred_until=20.5)
    assert (filters.occurred_since, filters.occurred_until) == (10.0, 20.5)
    expr = build_filter("ns", filters)
    assert "@occurred_at:[10.0 20.5]" in expr and "@created_at" not in expr
    assert "@occurred_at:[-inf 5.0]" in build_filter("ns", SearchFilters(occurred_until=5))
    assert "@occurred_at" not in build_filter("ns", SearchFilters(since=5))
    assert is_selective(SearchFilters(occurred_since=1.0))
    assert not is_selective(SearchFilters())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"occurred_since": "May"}, "occurred_since must be a finite number"),
        ({"occurred_until": math.nan}, "occurred_until must be a finite number"),
        ({"occurred_since": 20, "occurred_until": 10}, "is after occurred_until"),
    ],
)
def test_bad_occurred_filters_are_query_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidQuery, match=message):
        search_filters(**kwargs)  # type: ignore[arg-type]


def test_the_cli_reads_seconds_dates_and_datetimes() -> None:
    assert moment("1683554160") == MAY_8
    assert moment("2023-05-08T13:56:00Z") == MAY_8
    assert moment("2023-05-08T15:56:00+02:00") == MAY_8
    assert moment("2023-05-08") == 1683504000.0  # midnight UTC
    with pytest.raises(argparse.ArgumentTypeError, match="neither unix seconds nor an ISO date"):
        moment("last tuesday")


def test_the_hits_table_shows_the_date_it_happened() -> None:
    hit = SearchHit(
        id="m1",
        content="Alice moved to Berlin",
        source="",
        agent_id="a",
        session_id="",
        task_type="",
        tags=(),
        created_at=MAY_8,
        occurred_at=MAY_8,
    )
    assert "[2023-05-08] Alice moved to Berlin" in hits_table([hit], now=MAY_8)


def test_index_attributes_are_read_from_resp2_and_resp3_replies() -> None:
    resp2 = [
        b"index_name",
        b"i",
        b"attributes",
        [
            [b"identifier", b"content", b"attribute", b"content", b"type", b"TEXT"],
            [b"identifier", b"created_at", b"attribute", b"created_at", b"type", b"NUMERIC"],
        ],
    ]
    assert attribute_names(resp2) == {"content", "created_at"}
    resp3 = {"attributes": [{"identifier": "occurred_at", "attribute": "occurred_at"}]}
    assert attribute_names(resp3) == {"occurred_at"}
