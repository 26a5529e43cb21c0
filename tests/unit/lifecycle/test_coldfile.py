"""The export file format: lines round-trip every field, damage is detected (no Redis)."""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.errors import ExportFileError
from hindsight_redis.lifecycle.coldfile import (
    ExportHeader,
    content_hash,
    decode_memory,
    encode_memory,
    read_export,
    write_header,
)

HEADER = ExportHeader(
    namespace="ns",
    exported_at=1.0,
    status="archived",
    count=1,
    embedding_model="m",
    embedding_dims=4,
    vector_field="vec_g1",
    contextual_model="c",
    contextual_dims=3,
)


def _fields() -> dict[str, bytes]:
    return {
        "content": "用户 alice prefers tea ☕".encode(),
        "status": b"archived",
        "access_count": b"3",
        "vec_g1": np.arange(4, dtype=np.float32).tobytes(),
        CONTEXT_FIELD: np.ones(3, dtype=np.float32).tobytes(),
        "odd": b"\xff\xfe not text",
    }


def test_a_memory_line_round_trips_every_field_and_both_vectors() -> None:
    fields = _fields()
    line = encode_memory("m1", fields, "vec_g1")
    data = json.loads(line)
    assert (
        data["vector"]
        and data["contextual_vector"]
        and data["binary"] == {"odd": "//4gbm90IHRleHQ="}
    )
    memory = decode_memory(line, HEADER)
    assert memory.id == "m1" and memory.fields == fields and memory.status == "archived"


def test_the_content_hash_is_sha1_of_the_fields_in_name_order() -> None:
    fields = {"b": b"2", "a": b"xy"}
    digest, names = content_hash(fields)
    assert names == ["a", "b"]
    assert digest == hashlib.sha1(b"a\x002\x00xyb\x001\x002").hexdigest()
    assert content_hash(dict(reversed(list(fields.items()))))[0] == digest
    assert content_hash({"a": b"xy", "b": b"3"})[0] != digest


def test_a_line_whose_content_was_edited_is_refused() -> None:
    data = json.loads(encode_memory("m1", _fields(), "vec_g1"))
    data["fields"]["content"] = "something else"
    with pytest.raises(ExportFileError, match="does not match its hash"):
        decode_memory(json.dumps(data), HEADER)


def test_a_file_is_read_back_header_first(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        write_header(out, HEADER)
        out.write(encode_memory("m1", _fields(), "vec_g1") + "\n")
    header, memories = read_export(path)
    assert header == HEADER
    assert [m.id for m in memories] == ["m1"]


def test_a_header_names_the_vector_datatypes_and_an_older_one_means_float32(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f16.jsonl.gz"
    half = replace(HEADER, vector_datatype="float16", contextual_datatype="float16")
    with gzip.open(path, "wt", encoding="utf-8") as out:
        write_header(out, half)
    assert read_export(path)[0] == half
    older = {k: v for k, v in asdict(HEADER).items() if not k.endswith("_datatype")}
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(json.dumps(older) + "\n")  # written before datatypes were recorded
    header = read_export(path)[0]
    assert (header.vector_datatype, header.contextual_datatype) == ("float32", "float32")


@pytest.mark.parametrize(
    "content",
    [
        b"not gzip at all",
        gzip.compress(b'{"format": "other"}\n'),
        gzip.compress(b'{"format": "hindsight-redis-export", "version": 99}\n'),
    ],
)
def test_a_file_that_is_not_an_export_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(content)
    with pytest.raises(ExportFileError):
        read_export(path)


def test_a_truncated_file_is_refused_while_reading(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        write_header(out, HEADER)
        for n in range(200):
            out.write(encode_memory(f"m{n}", _fields(), "vec_g1") + "\n")
    path.write_bytes(path.read_bytes()[:-400])
    _header, memories = read_export(path)
    with pytest.raises(ExportFileError, match="truncated or damaged"):
        list(memories)
