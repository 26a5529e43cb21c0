"""The export file: gzip'd JSON lines, a header first, then one memory per line.

Pure module: no Redis. The header names the namespace, the embedding models,
dimensions and datatypes (how the vectors' bytes are encoded; a file naming
none holds float32), the export time, the status exported and the count.
Each memory line holds every field of the memory's hash: text fields as text, the
vectors base64 (``vector``, ``contextual_vector``), any other non-text value
base64 in ``binary``, and ``hash``, the content hash ``purge`` checks the
memory against before deleting it (``content_hash``; the purge script
computes the same in Lua).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.vectors import LEGACY_DATATYPE
from hindsight_redis.errors import ExportFileError

FORMAT = "hindsight-redis-export"
FORMAT_VERSION = 1
EXPORT_STATUSES = ("archived", "active", "all")


@dataclass(frozen=True, slots=True)
class ExportHeader:
    """The first line of an export file."""

    namespace: str
    exported_at: float
    status: str
    count: int
    embedding_model: str
    embedding_dims: int
    vector_field: str
    contextual_model: str = ""
    contextual_dims: int = 0
    vector_datatype: str = LEGACY_DATATYPE
    contextual_datatype: str = LEGACY_DATATYPE
    contextual_projection: str = ""
    format: str = FORMAT
    version: int = FORMAT_VERSION


@dataclass(frozen=True, slots=True)
class ExportedMemory:
    """One memory line: its id, its hash's fields (raw bytes) and its content hash."""

    id: str
    fields: dict[str, bytes]
    hash: str

    @property
    def status(self) -> str:
        """The memory's status when it was exported."""
        return self.fields.get("status", b"").decode("utf-8", "replace")


def content_hash(fields: Mapping[str, bytes]) -> tuple[str, list[str]]:
    """SHA-1 (hex) of a memory's fields in name order, and that order.

    Each field contributes ``name NUL len(value) NUL value``: the purge
    script rebuilds the same string from the live hash.
    """
    names = sorted(fields, key=lambda name: name.encode())
    digest = hashlib.sha1(usedforsecurity=False)
    for name in names:
        value = fields[name]
        digest.update(b"%s\x00%d\x00%s" % (name.encode(), len(value), value))
    return digest.hexdigest(), names


def encode_memory(memory_id: str, fields: Mapping[str, bytes], vector_field: str) -> str:
    """One memory line (JSON, no newline) from its hash's fields."""
    text: dict[str, str] = {}
    binary: dict[str, str] = {}
    line: dict[str, Any] = {"id": memory_id, "vector": None, "contextual_vector": None}
    for name, value in fields.items():
        if name == vector_field:
            line["vector"] = base64.b64encode(value).decode()
        elif name == CONTEXT_FIELD:
            line["contextual_vector"] = base64.b64encode(value).decode()
        else:
            try:
                text[name] = value.decode("utf-8")
            except UnicodeDecodeError:
                binary[name] = base64.b64encode(value).decode()
    line["fields"] = text
    if binary:
        line["binary"] = binary
    line["hash"] = content_hash(fields)[0]
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def decode_memory(raw: str, header: ExportHeader) -> ExportedMemory:
    """The inverse of ``encode_memory``; ``ExportFileError`` when the line is damaged."""
    try:
        line = json.loads(raw)
        fields = {name: value.encode() for name, value in line["fields"].items()}
        for name, value in (line.get("binary") or {}).items():
            fields[name] = base64.b64decode(value)
        if line.get("vector") is not None:
            fields[header.vector_field] = base64.b64decode(line["vector"])
        if line.get("contextual_vector") is not None:
            fields[CONTEXT_FIELD] = base64.b64decode(line["contextual_vector"])
        memory = ExportedMemory(str(line["id"]), fields, str(line["hash"]))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ExportFileError(f"damaged memory line: {e}") from None
    if content_hash(memory.fields)[0] != memory.hash:
        raise ExportFileError(f"memory {memory.id}: its content does not match its hash")
    return memory


def write_header(out: Any, header: ExportHeader) -> None:
    """Write the header line to a text stream."""
    out.write(json.dumps(asdict(header), ensure_ascii=False, separators=(",", ":")) + "\n")


def read_export(path: Path) -> tuple[ExportHeader, Iterator[ExportedMemory]]:
    """The header of an export file and an iterator over its memories (read lazily)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as stream:
            first = stream.readline()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ExportFileError(f"cannot read {path}: {e}") from None
    try:
        data = json.loads(first)
        if data.get("format") != FORMAT:
            raise ValueError("not a hindsight-redis export")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"export format version {data.get('version')!r} is not supported")
        header = ExportHeader(**data)
    except (ValueError, TypeError, AttributeError) as e:
        raise ExportFileError(f"{path}: {e}") from None

    def memories() -> Iterator[ExportedMemory]:
        try:
            with gzip.open(path, "rt", encoding="utf-8") as stream:
                stream.readline()  # the header
                for raw in stream:
                    if raw.strip():
                        yield decode_memory(raw, header)
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise ExportFileError(f"{path} is truncated or damaged: {e}") from None

    return header, memories()
