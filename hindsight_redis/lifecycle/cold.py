"""Cold storage: export memories to a file, purge what was exported, import it back.

``export_memories`` writes every memory of a status (``coldfile`` format) to
a temporary file beside the target and renames it into place at the end, so
a crash never leaves a truncated file under the final name. ``purge_exported``
deletes only archived memories that are in the file and unchanged since (the
script compares the live hash with the exported content hash), in batches;
rerunning it after a crash finishes the job. ``import_memories`` restores a
file into a namespace: a memory whose id exists is left alone (importing
twice adds nothing), and so is one erased since the export (``Keys.erased``);
every export is recorded with the ids it holds (``exports``), so an erasure
names the files still holding what it erased. Vectors are reused when the file's models are the
index's, else the static vector is recomputed by the configured embedder
(which the index guard checks) and the contextual one left to the refiners.
"""

from __future__ import annotations

import gzip
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TypeVar

from redis.asyncio import Redis

from hindsight_redis.core.codec import pack_fields
from hindsight_redis.core.documents import (
    claim_digest,
    detect_language,
    split_tags,
    waiting_state,
)
from hindsight_redis.core.fields import CONTEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.vectors import (
    LEGACY_DATATYPE,
    convert_vector,
    vector_bytes,
    vectors_from_bytes,
)
from hindsight_redis.errors import ExportFileError, HindsightError, InvalidArgument, redis_errors
from hindsight_redis.index.manager import IndexInfo, MemoryIndex, recorded_index
from hindsight_redis.lifecycle.coldfile import (
    EXPORT_STATUSES,
    ExportedMemory,
    ExportHeader,
    encode_memory,
    read_export,
    write_header,
)
from hindsight_redis.lifecycle.exports import erased_among, record_export
from hindsight_redis.lifecycle.forgetting import memory_ids
from hindsight_redis.providers import multilingual
from hindsight_redis.providers.projection import project
from hindsight_redis.redis import scripts
from hindsight_redis.settings import EmbeddingSettings, IndexSettings, SearchSettings

Progress = Callable[[int, int], None]
"""Called with (memories done, memories in all) as a long export/purge/import goes."""
T = TypeVar("T")


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What ``export`` wrote."""

    path: str
    namespace: str
    status: str
    count: int
    bytes: int
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What ``purge`` removed and kept (and why)."""

    removed: int
    kept_changed: int
    kept_not_archived: int
    already_gone: int
    archived_left: int
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What ``import`` wrote: new memories, those already present, vectors recomputed,
    and those left out because they were erased since the export."""

    imported: int
    already_present: int
    reembedded: int
    elapsed_s: float
    erased: int = 0


async def export_memories(
    redis: Redis,
    keys: Keys,
    path: Path,
    *,
    status: str = "archived",
    batch: int = 500,
    progress: Progress | None = None,
) -> ExportReport:
    """Write the memories of ``status`` (archived, active or all) to ``path`` (.jsonl.gz),
    and record the file with the ids it holds (``exports.record_export``)."""
    if status not in EXPORT_STATUSES:
        raise InvalidArgument(f"status must be one of {', '.join(EXPORT_STATUSES)}")
    _check_writable(path)
    started = time.monotonic()
    info = await recorded_index(redis, keys)
    ids = await memory_ids(redis, keys, None if status == "all" else status, 1000)
    body = path.with_name(path.name + ".body.partial")
    final = path.with_name(path.name + ".partial")
    vector_field = info.vector_field if info else ""
    count = 0
    written: list[str] = []
    try:
        with gzip.open(body, "wt", encoding="utf-8") as out:
            for chunk in _chunks(ids, batch):
                with redis_errors("read the memories to export"):
                    pipe = redis.pipeline(transaction=False)
                    for memory_id in chunk:
                        pipe.hgetall(keys.doc(memory_id))
                    hashes = await pipe.execute()
                for memory_id, raw in zip(chunk, hashes, strict=True):
                    if raw:  # deleted since it was listed
                        fields = {as_text(k): bytes(v) for k, v in raw.items()}
                        out.write(encode_memory(memory_id, fields, vector_field) + "\n")
                        written.append(memory_id)
                        count += 1
                if progress is not None:
                    progress(count, len(ids))
        header = ExportHeader(
            namespace=keys.namespace,
            exported_at=time.time(),
            status=status,
            count=count,
            embedding_model=info.model_id if info else "",
            embedding_dims=info.dims if info else 0,
            vector_field=vector_field,
            contextual_model=info.context_model if info else "",
            contextual_dims=info.context_dims if info else 0,
            vector_datatype=info.datatype if info else LEGACY_DATATYPE,
            contextual_datatype=info.context_datatype if info else LEGACY_DATATYPE,
            contextual_projection=info.context_projection if info else "",
        )
        with gzip.open(final, "wt", encoding="utf-8") as out:
            write_header(out, header)
        with open(final, "ab") as out, open(body, "rb") as src:
            while block := src.read(1 << 20):  # gzip members concatenate: one stream
                out.write(block)
        os.replace(final, path)
    except OSError as e:
        if isinstance(e, HindsightError):  # Redis unreachable: said already
            raise
        raise ExportFileError(f"cannot write {path}: {e.strerror or e}") from e
    finally:
        for leftover in (body, final):
            leftover.unlink(missing_ok=True)
    await record_export(redis, keys, path, written, status=status, at=header.exported_at)
    elapsed = round(time.monotonic() - started, 3)
    return ExportReport(str(path), keys.namespace, status, count, path.stat().st_size, elapsed)


def _check_writable(path: Path) -> None:
    """``ExportFileError`` unless an export can be written at ``path`` (before any work)."""
    folder = path.parent
    if path.is_dir():
        raise ExportFileError(f"cannot export to {path}: it is a directory; name a file in it")
    if not folder.is_dir():
        raise ExportFileError(
            f"cannot export to {path}: the directory {folder} does not exist; create it "
            "or name a file in another"
        )
    if not os.access(folder, os.W_OK):
        raise ExportFileError(f"cannot export to {path}: the directory {folder} is not writable")


def verified_export(path: Path) -> tuple[ExportHeader, Iterator[ExportedMemory]]:
    """``read_export``, once every line of the file has been read and checked.

    A damaged or truncated file raises ``ExportFileError`` before anything is
    purged or imported.
    """
    header, memories = read_export(path)
    count = sum(1 for _ in memories)
    if count != header.count:
        raise ExportFileError(f"{path} holds {count} memories, its header says {header.count}")
    return read_export(path)


def _own_export(path: Path, keys: Keys) -> tuple[ExportHeader, Iterator[ExportedMemory]]:
    header, memories = verified_export(path)
    if header.namespace != keys.namespace:
        raise ExportFileError(
            f"{path} is an export of namespace {header.namespace!r}, not {keys.namespace!r}"
        )
    return header, memories


async def purge_exported(
    redis: Redis,
    keys: Keys,
    path: Path,
    *,
    progress: Progress | None = None,
    removed_ids: list[str] | None = None,
) -> PurgeReport:
    """Delete the archived memories of ``path`` that are unchanged since it was written;
    ``removed_ids`` gets the ids deleted."""
    from hindsight_redis.index.counts import memory_counts

    started = time.monotonic()
    header, memories = _own_export(path, keys)
    tally = {1: 0, 0: 0, -1: 0, -2: 0}
    done = 0
    for chunk in _chunks(memories, scripts.MEMORIES_PER_CALL):
        archived = [m for m in chunk if m.status == "archived"]
        tally[-2] += len(chunk) - len(archived)
        if archived:
            plan: list[str] = []
            for memory in archived:
                names = sorted(memory.fields, key=lambda name: name.encode())
                plan += [memory.id, memory.hash, str(len(names)), *names]
            with redis_errors("purge exported memories"):
                codes = await scripts.purge_if_unchanged(
                    redis,
                    access_log=keys.access_log,
                    memories=[keys.doc(m.id) for m in archived],
                    plan=plan,
                )
            gone = [m for m, code in zip(archived, codes, strict=True) if int(code) == 1]
            for code in codes:
                tally[int(code)] += 1
            if removed_ids is not None:
                removed_ids += [m.id for m in gone]
            await _release_claims(redis, keys, gone)
        done += len(chunk)
        if progress is not None:
            progress(done, header.count)
    counts = await memory_counts(redis, keys)
    return PurgeReport(
        removed=tally[1],
        kept_changed=tally[0],
        kept_not_archived=tally[-2],
        already_gone=tally[-1],
        archived_left=(counts or {}).get("archived", 0),
        elapsed_s=round(time.monotonic() - started, 3),
    )


async def _release_claims(redis: Redis, keys: Keys, purged: list[ExportedMemory]) -> None:
    """Delete the content claims of purged memories (a claim is per memory, kept forever
    otherwise), each only while it still names its memory."""
    if not purged:
        return
    claims = []
    for memory in purged:
        text = {name: memory.fields.get(name, b"").decode("utf-8", "replace") for name in _SCOPE}
        digest = claim_digest(
            keys.namespace,
            text["agent_id"],
            text["visibility"],
            split_tags(text["tags"]),
            text["content"],
        )
        claims.append(keys.content_claim(digest))
    with redis_errors("release the purged memories' content claims"):
        await scripts.release_claims(redis, claims=claims, ids=[m.id for m in purged])


_SCOPE = ("agent_id", "visibility", "tags", "content")


async def import_memories(
    redis: Redis,
    keys: Keys,
    index: IndexSettings,
    search: SearchSettings,
    embedding: EmbeddingSettings,
    path: Path,
    *,
    progress: Progress | None = None,
    imported_ids: list[str] | None = None,
) -> ImportReport:
    """Restore the memories of an export file into ``keys.namespace`` (idempotent); those
    erased since the export stay out. ``imported_ids`` gets the ids written.

    The index is ensured as ``MemoryIndex`` (``index``, ``search``, ``embedding``) does;
    memories of another model are embedded by the configured ``embedding``.
    """
    from hindsight_redis.providers.embedders import (
        contextual_from_settings,
        embedder_from_settings,
    )

    started = time.monotonic()
    header, memories = verified_export(path)
    embedder = embedder_from_settings(embedding)
    info = await MemoryIndex(redis, keys, index, search, embedding).ensure(
        embedder, contextual_from_settings(embedding)
    )
    same_model = (header.embedding_model, header.embedding_dims) == (info.model_id, info.dims)
    same_context = info.has_context and (header.contextual_model, header.contextual_dims) == (
        info.context_model,
        info.context_dims,
    )
    imported = present = reembedded = done = erased = 0
    for chunk in _chunks(memories, embedding.embedding_batch_size):
        with redis_errors("check which memories exist"):
            pipe = redis.pipeline(transaction=False)
            for memory in chunk:
                pipe.exists(keys.doc(memory.id))
            exists = await pipe.execute()
        gone = await erased_among(redis, keys, [m.id for m in chunk])
        erased += len(gone)
        todo = [m for m, found in zip(chunk, exists, strict=True) if not found and m.id not in gone]
        docs = [_target_fields(m, header, info, keys, same_model, same_context) for m in todo]
        stale = [d for d in docs if info.vector_field not in d]
        if stale:
            vectors = await embedder.embed([d["content"].decode() for d in stale])
            for doc, vector in zip(stale, vectors, strict=True):
                doc[info.vector_field] = vector_bytes(vector, info.datatype)
            reembedded += len(stale)
        for part in _chunks(zip(todo, docs, strict=True), scripts.MEMORIES_PER_CALL):
            packed = [pack_fields(doc) for _, doc in part]
            with redis_errors("import memories"):
                imported += await scripts.import_if_absent(
                    redis, memories=[keys.doc(m.id) for m, _ in part], docs=packed
                )
            if imported_ids is not None:
                imported_ids.extend(m.id for m, _ in part)
        present += len(chunk) - len(todo) - len(gone)
        done += len(chunk)
        if progress is not None:
            progress(done, header.count)
    elapsed = round(time.monotonic() - started, 3)
    return ImportReport(imported, present, reembedded, elapsed, erased=erased)


def _context_vector(raw: bytes, header: ExportHeader, info: IndexInfo) -> bytes | None:
    """A file's contextual vector as the index stores them; None when it cannot be
    (projected in the file, stored otherwise here: a refiner recomputes it)."""
    if header.contextual_projection == info.context_projection:
        return convert_vector(raw, header.contextual_datatype, info.context_datatype)
    if header.contextual_projection:
        return None
    whole = vectors_from_bytes([raw], header.contextual_datatype)
    return vector_bytes(project(whole, info.context_projection)[0], info.context_datatype)


def _target_fields(
    memory: ExportedMemory,
    header: ExportHeader,
    info: IndexInfo,
    keys: Keys,
    same_model: bool,
    same_context: bool,
) -> dict[str, bytes]:
    """The memory's fields as the target index expects them (its namespace and fields).

    Without ``same_model`` the static vector is left out (the caller embeds
    it); without ``same_context`` the contextual vector is dropped and the
    memory waits for a refiner (when the index has the field). Vectors kept
    are re-encoded from the file's datatypes (and projection) to the index's.
    """
    fields = dict(memory.fields)
    fields["namespace"] = keys.namespace.encode()
    vector = fields.pop(header.vector_field, None) if header.vector_field else None
    if same_model and vector is not None:
        fields[info.vector_field] = convert_vector(vector, header.vector_datatype, info.datatype)
    fields.pop("embedding_model", None)  # the target's index record names its model
    fields.pop("embedding_dims", None)
    context = fields.get(CONTEXT_FIELD)
    if same_context and context is not None:
        converted = _context_vector(context, header, info)
        same_context = converted is not None
        if converted is not None:
            fields[CONTEXT_FIELD] = converted
    if not same_context:
        fields.pop(CONTEXT_FIELD, None)
        content = fields.get("content", b"").decode()
        lang = detect_language(content)
        stored = multilingual.unpack(content, fields.get(multilingual.CHINESE_FIELD))
        if lang == "chinese" and stored is not None:
            fields["refine"] = b"done"  # its multilingual vector came with it
        else:
            fields["refine"] = waiting_state(lang, contextual=info.has_context).encode()
    return fields
