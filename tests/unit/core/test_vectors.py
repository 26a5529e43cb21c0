"""Vectors as stored bytes: one encoding for hashes, KNN queries and exports."""

from __future__ import annotations

import numpy as np
import pytest

from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.vectors import (
    VECTOR_DATATYPES,
    convert_vector,
    datatype_of,
    vector_bytes,
    vectors_from_bytes,
)
from hindsight_redis.index.schema import index_schema
from hindsight_redis.providers.vectors import normalize_rows

UNIT = normalize_rows(np.random.default_rng(7).standard_normal((5, 384)))


@pytest.mark.parametrize(("datatype", "width"), [("float32", 4), ("float16", 2)])
def test_vector_bytes_take_the_datatype_width_and_read_back(datatype: str, width: int) -> None:
    raw = [vector_bytes(row, datatype) for row in UNIT]
    assert {len(r) for r in raw} == {384 * width}
    assert all(datatype_of(r, 384) == datatype for r in raw)
    back = vectors_from_bytes(raw, datatype)
    assert back.dtype == np.float32 and back.shape == UNIT.shape
    np.testing.assert_allclose(back, UNIT, atol=1e-3 if datatype == "float16" else 0)


def test_float16_keeps_cosines_of_unit_vectors_within_1e_3() -> None:
    half = vectors_from_bytes([vector_bytes(row, "float16") for row in UNIT], "float16")
    assert np.abs(half @ UNIT[0] - UNIT @ UNIT[0]).max() < 1e-3


def test_vector_bytes_are_little_endian() -> None:
    assert vector_bytes([1.0], "float16") == b"\x00\x3c"
    assert vector_bytes([1.0], "float32") == b"\x00\x00\x80\x3f"


def test_a_vector_of_another_size_has_no_datatype() -> None:
    assert datatype_of(b"", 384) is None
    assert datatype_of(vector_bytes(UNIT[0], "float32"), 256) is None


def test_convert_vector_between_datatypes() -> None:
    full = vector_bytes(UNIT[0], "float32")
    half = convert_vector(full, "float32", "float16")
    assert half == vector_bytes(UNIT[0], "float16")
    assert convert_vector(half, "float16", "float16") is half
    again = convert_vector(half, "float16", "float32")
    np.testing.assert_allclose(np.frombuffer(again, "<f4"), UNIT[0], atol=1e-3)


def test_an_unknown_datatype_is_refused() -> None:
    with pytest.raises(ValueError, match="bfloat16"):
        vector_bytes(UNIT[0], "bfloat16")
    assert VECTOR_DATATYPES == ("float32", "float16")


def test_index_schema_gives_each_vector_field_its_datatype() -> None:
    schema = index_schema(
        Keys("t", "ns"),
        generation=2,
        dims=256,
        context_dims=384,
        datatype="float16",
        context_datatype="float32",
    )
    kinds = {f.name: f.attrs.datatype.value for f in schema.fields.values() if f.type == "vector"}
    assert kinds == {"vec_g2": "FLOAT16", CONTEXT_FIELD: "FLOAT32"}
