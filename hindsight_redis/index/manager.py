"""The namespace's search index: create, check, rebuild, inspect.

``MemoryIndex.ensure`` creates the index of generation 1 and its alias on
first use, and records the embedding model, dimension and generation in
``Keys.index_meta``; later calls check the embedder against that record and
raise ``EmbeddingMismatch`` when they differ. ``reindex`` builds generation
N+1 beside generation N over the same hashes (new vector field
``vec_g<N+1>``), swaps the alias with ``FT.ALIASUPDATE``, then drops the old
index (keeping the documents) and deletes the old vector field: searches
through the alias never stop.

Index names carry the hash tag, so on a cluster the index sits on the shard
of its memories. ``ensure`` adopts an index named before 0.2: one server adds
the new alias to it; a cluster builds the same generation under the new name
over the same hashes (nothing re-embedded) and drops the old one.

Vectors are stored as ``IndexSettings.vector_datatype`` (float16 by default) in
a new index; the record says how each field stores them (``index_record``).
An index recorded before that keeps float32 and is read and written as
float32. ``reindex`` gives the new static field the configured datatype;
the contextual field keeps its own unless its vectors are recomputed anyway
(another contextual model).

The index is created through redis-py with redisvl's field definitions:
redisvl cannot express ``LANGUAGE_FIELD``, which the Chinese support needs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.commands.search.index_definition import IndexDefinition, IndexType

from hindsight_redis.core.fields import (
    CONTEXT_FIELD,
    DEFAULT_LANGUAGE,
    LANGUAGE_FIELD,
    TEXT_FIELD,
    vector_field_name,
)
from hindsight_redis.core.keys import Keys, glob_escape
from hindsight_redis.core.resp import as_text, reply_map
from hindsight_redis.core.vectors import vector_bytes
from hindsight_redis.errors import EmbeddingMismatch, RedisCommandError, redis_errors
from hindsight_redis.index.definition import expected_definition, live_definition
from hindsight_redis.index.fields import add_missing
from hindsight_redis.index.health import index_health
from hindsight_redis.index.record import (
    IndexInfo,
    context_mismatch_message,
    context_record,
    info_from_meta,
    mismatch_message,
    recorded_index,
)
from hindsight_redis.index.schema import index_schema
from hindsight_redis.index.upgrade import DATA_FORMAT_VERSION, record_current, upgrade
from hindsight_redis.providers.vectors import Embedder, resolve_dims
from hindsight_redis.redis import scripts
from hindsight_redis.redis.cluster import is_cluster
from hindsight_redis.settings import EmbeddingSettings, IndexSettings, SearchSettings

if TYPE_CHECKING:
    from redisvl.schema import IndexSchema

__all__ = [
    "IndexInfo",
    "MemoryIndex",
    "context_mismatch_message",
    "index_health",
    "mismatch_message",
    "recorded_index",
]

logger = logging.getLogger(__name__)

_UPGRADE_WAIT_S = 2.0
"""How long an ``ensure`` that starts an index rebuild waits for it (a small namespace's
is done by then); a longer one is finished by a later ``ensure`` or worker maintenance."""


class MemoryIndex:
    """Creates, checks and rebuilds the search index of one namespace.

    A new index is laid out as ``index`` says (vector datatype, HNSW graphs),
    with ``search.hnsw_ef_runtime`` as its default query depth and the
    contextual vectors stored at ``embedding.contextual_stored_dims``;
    ``reindex`` embeds ``embedding.embedding_batch_size`` memories at a time.
    """

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        index: IndexSettings,
        search: SearchSettings,
        embedding: EmbeddingSettings,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._index = index
        self._search = search
        self._embedding = embedding
        self._current = False  # the data format, once found current

    async def _meta(self) -> dict[str, str]:
        raw = await self._redis.hgetall(self._keys.index_meta)
        return {as_text(k): as_text(v) for k, v in raw.items()}

    async def info(self) -> IndexInfo | None:
        """The recorded live index, or None before the first ``ensure``."""
        return await recorded_index(self._redis, self._keys)

    async def _exists(self, name: str) -> bool:
        """Whether index (or alias) ``name`` exists; ``SearchModuleMissing`` without FT.*."""
        try:
            with redis_errors("read the index"):
                await self._redis.execute_command("FT.INFO", name)  # type: ignore[no-untyped-call]
        except RedisCommandError:
            return False  # unknown index
        return True

    def _schema(self, info: IndexInfo) -> IndexSchema:
        """The schema of ``info``'s index as this release lays it out."""
        return index_schema(
            self._keys,
            generation=info.generation,
            dims=info.dims,
            context_dims=info.context_field_dims,
            datatype=info.datatype,
            context_datatype=info.context_datatype,
            hnsw_m=self._index.hnsw_m,
            context_hnsw_m=self._index.context_hnsw_m,
            hnsw_ef_construction=self._index.hnsw_ef_construction,
            hnsw_ef_runtime=self._search.hnsw_ef_runtime,
        )

    async def _create(self, info: IndexInfo, name: str | None = None) -> None:
        """Create ``info``'s index (under ``name``, else its generation's) unless it exists."""
        schema = self._schema(info)
        name = name or schema.index.name
        if await self._exists(name):
            return
        definition = IndexDefinition(  # type: ignore[no-untyped-call]
            prefix=[self._keys.doc_prefix],
            index_type=IndexType.HASH,
            language_field=LANGUAGE_FIELD,
            language=DEFAULT_LANGUAGE,
        )
        try:
            with redis_errors("create the search index"):
                await self._redis.ft(name).create_index(
                    fields=schema.redis_fields,
                    definition=definition,
                    stopwords=schema.index.stopwords,
                    # One text field: the per-term field masks would say nothing.
                    no_field_flags=True,
                )
        except RedisCommandError as e:
            if "already exists" not in e.reply.lower():  # another process was first
                raise
        logger.info("created index %s (%d dims, %s)", name, info.dims, info.datatype)

    async def ensure(self, embedder: Embedder, contextual: Embedder | None = None) -> IndexInfo:
        """Create the index and alias if missing; check the embedders against them.

        A new index gets the contextual vector field when ``contextual`` is
        given. Raises ``EmbeddingMismatch`` when the index was built with
        another model or dimension (for either vector), ``SearchModuleMissing``
        when the server cannot index at all. An index without the contextual
        field stays without it (``reindex`` adds it).
        """
        with redis_errors("prepare the search index"):
            await self._exists(self._keys.index_alias)  # no search module: fails here
            meta = await self._meta()
            await self._learn_dims(meta, embedder, contextual)
            if "generation" not in meta:
                datatype = self._index.vector_datatype
                record = {
                    "generation": "1",
                    "name": self._keys.index_name(1),
                    "vector_field": vector_field_name(1),
                    "model_id": embedder.model_id,
                    "dims": str(embedder.dims),
                    "datatype": datatype,
                    **context_record(contextual, datatype, self._embedding.contextual_stored_dims),
                }
                fields = [x for pair in record.items() for x in pair]
                if await scripts.record_if_absent(
                    self._redis, index_meta=self._keys.index_meta, fields=fields
                ):
                    await record_current(self._redis, self._keys)  # a new namespace
                meta = await self._meta()
            info = info_from_meta(self._keys, meta)
            self._check(info, embedder, contextual)
            named = self._keys.index_name(info.generation)  # (":f<N>": rebuilt by an upgrade)
            if info.name != named and not info.name.startswith(f"{named}:"):
                info = await self._adopt(info)  # named before 0.2
            else:
                await self._create(info)
                await self._alias(info.name)
            await add_missing(self._redis, info.name)  # an index of an earlier release
            return await self._upgrade(info, wait_s=_UPGRADE_WAIT_S)

    async def finish_upgrade(self) -> None:
        """Finish an upgrade ``ensure`` left running (an index still being rebuilt): the
        worker's maintenance calls it; a no-op once the data is current."""
        if self._current:
            return
        info = await self.info()
        if info is not None:
            await self._upgrade(info, wait_s=0.0)

    async def _upgrade(self, info: IndexInfo, wait_s: float) -> IndexInfo:
        """Run the data format's pending steps (``index.upgrade``); the live index after."""
        rebuilt: list[IndexInfo] = []

        async def rebuild() -> bool:
            new, done = await self._rebuild_definition(info, wait_s)
            rebuilt.append(new)
            return done

        self._current = (await upgrade(self._redis, self._keys, rebuild)).current
        return rebuilt[-1] if rebuilt else info

    async def _rebuild_definition(self, info: IndexInfo, wait_s: float) -> tuple[IndexInfo, bool]:
        """The index of ``info``, rebuilt from this release's schema when its definition
        differs (``index.definition``), over the same hashes and vectors (nothing is
        re-embedded): created beside it, the alias moved once it has indexed every
        memory, the old one dropped (its documents kept); and whether that is done. The
        old index serves every search meanwhile. Waits ``wait_s`` at most for the build,
        and only when this call started it (another process's build is not waited on)."""
        schema = self._schema(info)
        wanted = expected_definition(
            (f.redis_args() for f in schema.redis_fields), schema.index.stopwords or ()
        )
        try:
            with redis_errors("read the index"):
                raw = await self._redis.execute_command("FT.INFO", info.name)  # type: ignore[no-untyped-call]
        except RedisCommandError:
            now = await self.info()  # dropped: another process upgraded it first
            if now is None or now.name == info.name:
                raise
            return now, True
        changes = wanted.differences(live_definition(raw))
        if not changes:
            return info, True
        # One name per data format: a second process (or a rerun) finds it built.
        name = f"{self._keys.index_name(info.generation)}:f{DATA_FORMAT_VERSION}"
        if not await self._exists(name):
            logger.warning(
                "index %s differs from this release's (%s): rebuilding it as %s",
                *(info.name, "; ".join(changes), name),
            )
            await self._create(info, name)
            await self._redis.hset(self._keys.data_format, "building", name)
        else:
            wait_s = 0.0
        try:
            await self.wait_indexed(name, timeout_s=wait_s)
        except TimeoutError:
            return info, False  # the next ensure, or the worker's maintenance, finishes it
        await self._redis.hset(self._keys.index_meta, "name", name)
        await self._redis.execute_command("FT.ALIASUPDATE", self._keys.index_alias, name)  # type: ignore[no-untyped-call]
        await self._drop(info.name)
        await self._redis.hdel(self._keys.data_format, "building")
        logger.info("index %s rebuilt as %s", info.name, name)
        return replace(info, name=name), True

    async def _alias(self, name: str) -> None:
        """Point the alias at ``name`` unless it exists. ADD, never UPDATE: only reindex
        moves it (an ensure that read the old generation must not move it back)."""
        try:
            with redis_errors("add the index alias"):
                await self._redis.execute_command(  # type: ignore[no-untyped-call]
                    "FT.ALIASADD", self._keys.index_alias, name
                )
        except RedisCommandError as e:
            if "exists" not in e.reply.lower():
                raise

    async def _adopt(self, old: IndexInfo) -> IndexInfo:
        """Keep an index built before 0.2 (a name without the hash tag) in service."""
        if not is_cluster(self._redis) and await self._exists(old.name):
            await self._alias(old.name)  # found: the next reindex gives it a new name
            logger.info("index %s predates 0.2: alias %s added", old.name, old.alias)
            return old
        # On a cluster the old name sits on another shard than the memories.
        await self._create(old)
        name = self._keys.index_name(old.generation)
        await self.wait_indexed(name)
        await self._redis.hset(self._keys.index_meta, "name", name)
        await self._alias(name)
        await self._drop(old.name)
        logger.warning("index %s predates 0.2: rebuilt as %s", old.name, name)
        return replace(old, name=name)

    async def _drop(self, name: str) -> None:
        """Drop index ``name``, keeping its documents (a warning if that fails)."""
        try:
            with redis_errors("drop the old index"):
                await self._redis.execute_command("FT.DROPINDEX", name)  # type: ignore[no-untyped-call]
        except RedisCommandError as e:
            logger.warning("could not drop old index %s: %s", name, e)

    @staticmethod
    async def _learn_dims(
        meta: Mapping[str, str], embedder: Embedder, contextual: Embedder | None
    ) -> None:
        """Embedders of unknown dimension (a model litellm does not list) take the one the
        index records for their model, or probe it once."""
        same = meta.get("model_id") == embedder.model_id and meta.get("dims")
        await resolve_dims(embedder, int(meta["dims"]) if same else None)
        if contextual is not None:
            ctx = meta.get("context_model") == contextual.model_id and meta.get("context_dims")
            await resolve_dims(contextual, int(meta["context_dims"]) if ctx else None)

    @staticmethod
    def _check(info: IndexInfo, embedder: Embedder, contextual: Embedder | None) -> None:
        if info.model_id != embedder.model_id or info.dims != embedder.dims:
            raise EmbeddingMismatch(mismatch_message(info, embedder.model_id, embedder.dims))
        if contextual is None:
            return
        if info.has_context and (
            info.context_model != contextual.model_id or info.context_dims != contextual.dims
        ):
            raise EmbeddingMismatch(context_mismatch_message(info, contextual))
        if not info.has_context:
            logger.warning(
                "index %s has no contextual vectors; run hindsight-redis reindex to add them",
                info.alias,
            )

    async def health(self) -> dict[str, Any]:
        """Index health for ``doctor`` (``index_health``)."""
        return await index_health(self._redis, self._keys)

    async def wait_indexed(self, name: str, timeout_s: float = 300.0) -> None:
        """Wait until the index ``name`` finished its background scan."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            with redis_errors("read the index"):
                raw = reply_map(await self._redis.execute_command("FT.INFO", name))  # type: ignore[no-untyped-call]
            if float(as_text(raw.get("percent_indexed", 1))) >= 1.0:
                return
            if loop.time() > deadline:
                raise TimeoutError(f"index {name} still indexing after {timeout_s}s")
            await asyncio.sleep(0.05)

    async def _scan_ids(self) -> list[str]:
        pattern = glob_escape(self._keys.doc_prefix) + "*"
        return [as_text(key) async for key in self._redis.scan_iter(match=pattern, count=1000)]

    async def _each_memory(self, queue: Callable[[Pipeline, str], None]) -> None:
        """Run ``queue(pipe, key)`` for every memory hash, 1,000 per pipelined round trip."""
        ids = await self._scan_ids()
        for start in range(0, len(ids), 1000):
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in ids[start : start + 1000]:
                    queue(pipe, key)
                await scripts.execute(pipe)

    async def _embed_missing(self, embedder: Embedder, keys: Sequence[str], new: IndexInfo) -> int:
        """Write ``new.vector_field`` (the new vector) into each hash of ``keys`` lacking it."""
        field = new.vector_field
        batch_size = self._embedding.embedding_batch_size
        written = 0
        for start in range(0, len(keys), batch_size):
            chunk = keys[start : start + batch_size]
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in chunk:
                    pipe.hmget(key, [TEXT_FIELD, field])
                rows = await pipe.execute()
            todo = [
                (key, as_text(row[0]))
                for key, row in zip(chunk, rows, strict=True)
                if row[0] is not None and row[1] is None
            ]
            if not todo:
                continue
            vectors = await embedder.embed([content for _, content in todo])
            async with self._redis.pipeline(transaction=False) as pipe:
                for (key, _), vector in zip(todo, vectors, strict=True):
                    data = vector_bytes(vector, new.datatype)
                    pipe.hset(key, field, data)
                    # The index record names the model; hashes of older releases named it too.
                    pipe.hdel(key, "embedding_model", "embedding_dims")
                await pipe.execute()
            written += len(todo)
        return written

    async def _reset_context(self, record: Mapping[str, str], contextual: bool) -> None:
        """Switch the contextual model: record it, drop every old contextual vector.

        Recorded first, so refiners still on the old model stop writing
        (their script checks the record); the memories become ``pending``
        again and refiners on the new model fill them in (``off`` when the new
        index has no contextual field).
        """
        mapping: dict[Any, Any] = dict(record)  # (redis-py's Mapping type is invariant)
        await self._redis.hset(self._keys.index_meta, mapping=mapping)
        fields = ["refine", "pending" if contextual else "off"]

        def reset(pipe: Pipeline, key: str) -> None:
            pipe.hdel(key, CONTEXT_FIELD)  # on a deleted key: a no-op
            scripts.update_existing.queue(pipe, memory=key, fields=fields)

        await self._each_memory(reset)

    async def reindex(
        self, new_embedder: Embedder, contextual: Embedder | None = None
    ) -> IndexInfo:
        """Rebuild the index under ``new_embedder`` without stopping searches.

        ``contextual`` is the contextual embedder of the new index (None: no
        contextual field). When it changes, the old contextual vectors are
        dropped first and refiners recompute them. Writers still using the old
        embedder are refused by ``ensure`` once the alias moved; restart them
        with the new embedder.
        """
        old = await self.info()
        if old is None:
            return await self.ensure(new_embedder, contextual)
        await resolve_dims(new_embedder)
        if contextual is not None:
            await resolve_dims(contextual)
        with redis_errors("rebuild the search index"):
            info = await self._rebuild(old, new_embedder, contextual)
        return info

    async def _rebuild(
        self, old: IndexInfo, new_embedder: Embedder, contextual: Embedder | None
    ) -> IndexInfo:
        datatype = self._index.vector_datatype
        context = context_record(contextual, datatype, self._embedding.contextual_stored_dims)
        if context["context_model"] != old.context_model:  # new vectors, the new encoding
            await self._reset_context(context, contextual is not None)
        elif contextual is not None:  # the vectors stay, and so do their datatype and projection
            context["context_datatype"] = old.context_datatype
            context["context_projection"] = old.context_projection
        generation = old.generation + 1
        record: dict[Any, Any] = {
            "generation": str(generation),
            "name": self._keys.index_name(generation),
            "vector_field": vector_field_name(generation),
            "model_id": new_embedder.model_id,
            "dims": str(new_embedder.dims),
            "datatype": datatype,
            **context,
        }
        new = info_from_meta(self._keys, record)
        await self._create(new)
        # Two passes: the second catches memories written during the first.
        total = 0
        for _ in range(2):
            total += await self._embed_missing(new_embedder, await self._scan_ids(), new)
        await self.wait_indexed(new.name)
        await self._redis.hset(self._keys.index_meta, mapping=record)
        # Record first, then swap: searchers see the new generation in the
        # record (and re-ensure) before the alias stops serving their field.
        await self._redis.execute_command("FT.ALIASUPDATE", self._keys.index_alias, new.name)  # type: ignore[no-untyped-call]
        # Memories committed between the last pass and the swap.
        total += await self._embed_missing(new_embedder, await self._scan_ids(), new)
        await self._drop(old.name)

        def drop_old_vector(pipe: Pipeline, key: str) -> None:
            pipe.hdel(key, old.vector_field)

        await self._each_memory(drop_old_vector)
        logger.info("reindexed %s: generation %d, %d vectors", old.alias, generation, total)
        info = await self.info()
        assert info is not None
        return info
