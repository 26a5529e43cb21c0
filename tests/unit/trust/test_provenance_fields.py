"""Provenance on a memory's hash, its hits, and the trusted_only filter (pure parts)."""

from __future__ import annotations

import pytest

from hindsight_redis.core.documents import (
    HIT_FIELDS,
    hit_from_fields,
    memory_document,
    record_from_fields,
)
from hindsight_redis.core.models import MemoryEvent, SearchFilters
from hindsight_redis.core.requests import parse_search, parse_write
from hindsight_redis.errors import InvalidQuery
from hindsight_redis.index.fields import ADDED_FIELDS
from hindsight_redis.index.filters import build_filter
from hindsight_redis.search.query import is_selective


def test_the_hash_holds_the_provenance_and_reads_it_back() -> None:
    event = MemoryEvent(event_id="m1", namespace="n", content="x", provenance="token")
    doc = memory_document(event, content="x", vector_field="v", vector_datatype="float16")
    assert doc["provenance"] == "token" and "reviewed" not in doc
    record = record_from_fields("m1", {**doc, "reviewed": "1"})
    assert record.provenance == "token" and record.reviewed
    hit = hit_from_fields("m1", {name: doc.get(name) for name in HIT_FIELDS}, fused=0.5)
    assert hit.provenance == "token" and not hit.reviewed
    unknown = MemoryEvent(event_id="m2", namespace="n", content="x")
    assert "provenance" not in memory_document(
        unknown, content="x", vector_field="v", vector_datatype="float16"
    )


def test_a_write_carries_the_edges_provenance_and_hold() -> None:
    request = parse_write(
        {"content": "x"},
        namespace="n",
        max_content_chars=100,
        max_tags=4,
        provenance="settings",
        hold="secret:jwt",
    )
    assert request.event.provenance == "settings" and request.event.hold == "secret:jwt"


def test_trusted_only_is_a_selective_filter_of_identified_or_reviewed_memories() -> None:
    request = parse_search("deploy", {"trusted_only": True}, viewer="")
    assert request.filters.trusted_only and is_selective(request.filters)
    expr = build_filter("n", request.filters)
    assert "(@provenance:{token} | @provenance:{settings} | @reviewed:{1})" in expr
    assert "@provenance" not in build_filter("n", SearchFilters())
    with pytest.raises(InvalidQuery, match="trusted_only"):
        parse_search("deploy", {"trusted_only": "yes"}, viewer="")


def test_older_indexes_gain_the_tag_fields() -> None:
    added = dict(ADDED_FIELDS)
    assert added["provenance"][0] == added["reviewed"][0] == "TAG"
