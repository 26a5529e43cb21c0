"""The index definition this release builds, read from FT.INFO in both protocols, and the
upgrade steps' registry."""

from __future__ import annotations

from hindsight_redis.core.fields import OCCURRED_FIELD, SINGLE_SEPARATOR
from hindsight_redis.core.keys import Keys
from hindsight_redis.index.definition import expected_definition, live_definition
from hindsight_redis.index.schema import index_schema
from hindsight_redis.index.upgrade import DATA_FORMAT_VERSION, STEPS

TAG_OPTIONS = [b"SEPARATOR", b"\x1f", b"CASESENSITIVE", b"INDEXMISSING"]
# FT.INFO of Redis 8 (RESP2), trimmed to what is compared.
RESP2 = [
    b"index_name",
    b"i",
    b"attributes",
    [
        [b"identifier", b"content", b"attribute", b"content", b"type", b"TEXT", b"WEIGHT", b"1"],
        [b"identifier", b"t", b"attribute", b"t", b"type", b"TAG", *TAG_OPTIONS],
        [b"identifier", b"n", b"attribute", b"n", b"type", b"NUMERIC", b"SORTABLE", b"UNF"],
        [b"identifier", b"v", b"attribute", b"v", b"type", b"VECTOR", b"dim", 4, b"M", 16],
    ],
    b"stopwords_list",
    [b"a", b"b"],
]
RESP3 = {
    b"attributes": [
        {b"identifier": b"content", b"attribute": b"content", b"type": b"TEXT", b"WEIGHT": 1.0}
        | {b"flags": []},
        {b"identifier": b"t", b"attribute": b"t", b"type": b"TAG", b"SEPARATOR": b"\x1f"}
        | {b"flags": [b"CASESENSITIVE", b"INDEXMISSING"]},
        {b"identifier": b"n", b"attribute": b"n", b"type": b"NUMERIC", b"flags": [b"SORTABLE"]},
        {b"identifier": b"v", b"attribute": b"v", b"type": b"VECTOR", b"dim": 4, b"flags": []},
    ],
    b"stopwords_list": [b"a", b"b"],
}
ARGS = [
    ["content", "TEXT", "WEIGHT", 1.0],
    ["t", "TAG", "SEPARATOR", "\x1f", "CASESENSITIVE", "INDEXMISSING"],
    ["n", "NUMERIC", "SORTABLE"],
    ["v", "VECTOR", "HNSW", "6", "TYPE", "FLOAT16", "DIM", 4, "DISTANCE_METRIC", "COSINE"],
]


def test_both_protocols_read_as_the_definition_built() -> None:
    built = expected_definition(ARGS, ["b", "a"])
    assert set(built.fields) == {"content", "t", "n"}  # vectors belong to the record
    assert built.differences(live_definition(RESP2)) == []
    assert built.differences(live_definition(RESP3)) == []


def test_differences_name_each_field_and_the_stopwords() -> None:
    built = expected_definition([*ARGS, ["o", "NUMERIC", "INDEXMISSING"]], ["a"])
    assert built.differences(live_definition(RESP2)) == [
        "field o: missing",
        "stopwords: 2, now 1",
    ]
    older = expected_definition(
        [["content", "TEXT"], ["t", "TAG", "SEPARATOR", "\x1f"]], ["a", "b"]
    )
    assert older.differences(live_definition(RESP2)) == [
        f"field t: TAG SEPARATOR {SINGLE_SEPARATOR!r} CASESENSITIVE INDEXMISSING, "
        f"now TAG SEPARATOR {SINGLE_SEPARATOR!r}",
        "field n: no longer in the schema",
    ]


def test_this_release_indexes_the_undated_memories() -> None:
    schema = index_schema(Keys("p", "n"), generation=1, dims=8)
    built = expected_definition(
        (f.redis_args() for f in schema.redis_fields), schema.index.stopwords or ()
    )
    assert built.fields[OCCURRED_FIELD].flags == {"INDEXMISSING"}


def test_the_steps_run_in_order_up_to_the_current_version() -> None:
    versions = [step.version for step in STEPS]
    assert versions == sorted(versions) and len(set(s.name for s in STEPS)) == len(STEPS)
    assert versions[-1] == DATA_FORMAT_VERSION and versions[0] == 2  # 1: before the record
    assert all(step.index or step.run is not None for step in STEPS)
