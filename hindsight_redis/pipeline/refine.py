"""Refiners: add the contextual vector to memories already indexed.

The write path embeds with the fast static model, so a memory is searchable
within milliseconds. The contextual model (``providers.contextual``) is some
fifty times slower; workers run it between batches (``pipeline.pacing``:
whenever they keep up with the writes, and a share of their time when they
do not) or in processes of their own (``worker --role refine``), over
memories whose ``refine`` tag is still ``pending``:

1. find up to a few batches of pending memories (one ``FT.SEARCH``): the
   oldest of those written in the last ``RECENT_S`` seconds, so that while
   the refiners keep up every memory waits about as long as the backlog is
   deep (newest first would leave the memories of ten seconds ago behind
   the ones written since, and they are what agents ask for); when writes
   outpace the refiners, memories older than that wait for every
   ``OLDEST_EVERY``-th step, which takes the oldest of all, or for a pause;
2. claim each with ``SET NX PX`` (several workers never embed the same
   memory; a claim expires on its own, so a crashed refiner loses nothing);
3. embed the claimed texts (a memory written with a ``context`` is embedded
   with it: ``core.context.contextual_text``, the same text on every reindex);
4. store each vector with the ``REFINE`` script, which skips memories deleted
   or changed since, and refuses when a reindex switched the contextual model.

With a ``draft`` embedder (``contextual_drafts``: MiniLM's int8 graph, three
times faster), a memory first gets its vector from it (``refine`` tag
``draft``), and once no memory is ``pending`` the drafts are embedded again
with the exact model (tag ``done``): under writes, every new memory soon has
a contextual vector; at rest, every one has the exact one. (A draft of the
content alone, without its context, was three times cheaper again but found
7 points fewer of the answers asked for 10 s after they were written.)

Chinese memories (the contextual model reads English only) wait in the state
``chinese`` for the multilingual model's vector of their content instead
(``providers.multilingual``: it re-ranks Chinese searches), taken once no memory
is ``pending``; they are then ``done``.

Nothing is lost if a refiner dies at any step: the memory stays ``pending``
and searchable, only without the contextual signal, until a refiner returns.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import NamedTuple

import redis.asyncio as aioredis

from hindsight_redis.core.context import contextual_text
from hindsight_redis.core.fields import CONTEXT_FIELD, CREATED_FIELD, REFINE_CHINESE, TEXT_FIELD
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import NEVER_DECODE, as_text, search_rows
from hindsight_redis.core.vectors import LEGACY_DATATYPE, Vectors, vector_bytes
from hindsight_redis.errors import EmbeddingMismatch, redis_errors
from hindsight_redis.index.filters import refine_pending_filter
from hindsight_redis.index.record import IndexInfo, recorded_index
from hindsight_redis.providers import multilingual
from hindsight_redis.providers.multilingual import MultilingualE5
from hindsight_redis.providers.projection import project
from hindsight_redis.providers.vectors import Embedder
from hindsight_redis.redis import scripts

log = logging.getLogger(__name__)

_CLAIM_MS = 60_000
_CONTEXT = "context"  # the memory hash's fields (documents.memory_document)
_SCRIPT = "script"
OLDEST_EVERY = 4
RECENT_S = 30.0


class Pending(NamedTuple):
    """A memory waiting for its contextual vector: its key, content, context and script
    (``han``: Chinese)."""

    key: str
    content: str
    context: str = ""
    script: str = ""

    @property
    def text(self) -> str:
        """What the contextual model embeds for it."""
        return contextual_text(self.content, self.context)


class Refiner:
    """Fills in the contextual vectors of one namespace, a batch per call.

    ``info``: the namespace's index record, which says how the contextual
    field stores its vectors (``context_datatype``, ``context_projection``);
    None: read from the record on first use. ``draft``: a faster embedder of
    the same model for a first vector (see the module's docstring).
    ``multilingual``: the model of Chinese memories (``providers.multilingual``);
    None: they are left waiting (their state ``chinese`` is not a backlog: their
    searches embed them).
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        keys: Keys,
        embedder: Embedder,
        *,
        batch_size: int = 16,
        info: IndexInfo | None = None,
        draft: Embedder | None = None,
        multilingual: MultilingualE5 | None = None,
    ) -> None:
        self.redis = redis
        self.multilingual = multilingual
        self.keys = keys
        self.embedder = embedder
        self.draft = draft
        self.batch_size = batch_size
        self.info = info
        self.redone = 0  # drafts replaced by the exact model's vectors, so far
        self._steps = 0
        self._loading: asyncio.Task[object] | None = None

    async def _stored(self, vectors: Vectors) -> list[bytes]:
        """``vectors`` as the contextual field stores them (projection, datatype)."""
        if self.info is None:
            self.info = await recorded_index(self.redis, self.keys)
        if self.info is None:  # no record yet: whole float32 vectors, as before records
            return [vector_bytes(v, LEGACY_DATATYPE) for v in vectors]
        datatype = self.info.context_datatype
        return [vector_bytes(v, datatype) for v in project(vectors, self.info.context_projection)]

    async def pending(
        self,
        limit: int,
        *,
        newest: bool = False,
        since: float | None = None,
        state: str = "pending",
    ) -> list[Pending]:
        """Up to ``limit`` memories still without a contextual vector, the oldest first
        (``newest``: the newest), written at ``since`` (unix seconds) or later when
        given; ``state="draft"``: those with a draft one.

        The content is decoded for the model; the refine script compares the
        stored bytes with ``content.encode()`` (the stored text is the UTF-8 of
        a validated ``str``, so the two agree unless the memory changed).
        """
        query = refine_pending_filter(self.keys.namespace, state)
        if since is not None:
            query += f" @{CREATED_FIELD}:[{since!r} +inf]"
        with redis_errors("find memories to refine"):
            reply = await self.redis.execute_command(  # type: ignore[no-untyped-call]
                "FT.SEARCH",
                self.keys.index_alias,
                query,
                "RETURN",
                "3",
                TEXT_FIELD,
                _CONTEXT,
                _SCRIPT,
                "SORTBY",
                CREATED_FIELD,
                "DESC" if newest else "ASC",
                "LIMIT",
                "0",
                str(limit),
                "DIALECT",
                "2",
                **NEVER_DECODE,
            )
        return [
            Pending(
                r.key,
                as_text(r.fields.get(TEXT_FIELD)),
                as_text(r.fields.get(_CONTEXT)),
                as_text(r.fields.get(_SCRIPT)),
            )
            for r in search_rows(reply)
        ]

    def _claim_key(self, doc_key: str) -> str:
        return self.keys.refine_claim(doc_key.removeprefix(self.keys.doc_prefix))

    async def _claim(self, found: list[Pending], most: int) -> list[Pending]:
        """Claim up to ``most`` of ``found``; the surplus won is released at once."""
        with redis_errors("claim memories to refine"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for item in found:
                    pipe.set(self._claim_key(item.key), "1", nx=True, px=_CLAIM_MS)
                won = [item for item, ok in zip(found, await pipe.execute(), strict=True) if ok]
            surplus = won[most:]
            if surplus:
                await self.redis.delete(*(self._claim_key(item.key) for item in surplus))
        return won[:most]

    def loaded(self) -> bool:
        """Whether the first model is loaded; if not, starts loading it in the background
        (a second or two: ingest need not wait for it). An embedder without a ``load()``
        (models behind an API) counts as loaded."""
        if self._loading is None:
            load = getattr(self.draft or self.embedder, "load", None)
            if load is None:
                return True
            self._loading = asyncio.ensure_future(load())
        if not self._loading.done():
            return False
        if not self._loading.cancelled():
            self._loading.exception()  # seen: the embedding itself raises it again, mapped
        return True

    async def _vectors(
        self, claimed: list[Pending], embedder: Embedder, state: str
    ) -> list[tuple[Pending, str, bytes, str]]:
        """What to store for each claimed memory: the field, the vector's bytes and the
        refine state. Chinese memories (``script`` han) get the multilingual model's
        vector of their content (``providers.multilingual``), state ``done``; the rest the
        contextual vector of ``embedder``, ``state``. Without a multilingual model every
        memory gets the contextual one."""
        chinese = [i for i in claimed if i.script == "han"] if self.multilingual else []
        rest = [i for i in claimed if i not in chinese]
        out: list[tuple[Pending, str, bytes, str]] = []
        if rest:
            stored = await self._stored(await embedder.embed([i.text for i in rest]))
            out += [(i, CONTEXT_FIELD, v, state) for i, v in zip(rest, stored, strict=True)]
        if chinese:
            assert self.multilingual is not None
            vectors = await self.multilingual.embed_in_background([i.content for i in chinese])
            out += [
                (i, multilingual.CHINESE_FIELD, multilingual.pack(i.content, v), "done")
                for i, v in zip(chinese, vectors, strict=True)
            ]
        return out

    async def refine_once(self, most: int | None = None, *, between_rounds: bool = False) -> int:
        """Refine one batch of at most ``most`` (default ``batch_size``) memories; returns
        how many got their vector (0: none pending). ``between_rounds``: a step that holds
        ingest up while it runs, so it neither waits for the model to load (0 at once)
        nor redoes drafts with the exact model (three times slower: that waits for the
        background or an idle stream).

        Raises ``EmbeddingMismatch`` when the index records another
        contextual model than this refiner's (after a reindex).
        """
        if not self.loaded():
            if between_rounds:
                return 0
            assert self._loading is not None  # loaded() started it
            await self._loading  # a failure to load raises here, as it would below
        most = min(most or self.batch_size, self.batch_size)
        self._steps += 1
        since = time.time() - RECENT_S if self._steps % OLDEST_EVERY else None
        found = await self.pending(4 * most, since=since)
        if not found and since is not None:
            found = await self.pending(4 * most)
        embedder, state = (self.embedder, "done") if self.draft is None else (self.draft, "draft")
        if not found and self.multilingual is not None:
            found = await self.pending(4 * most, state=REFINE_CHINESE)
        if not found and self.draft is not None and not between_rounds:
            found = await self.pending(4 * most, state="draft")
            embedder, state = self.embedder, "done"
        if not found:
            return 0
        claimed = await self._claim(found, most)
        if not claimed:
            return 0
        stores = await self._vectors(claimed, embedder, state)
        with redis_errors("store contextual vectors"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for item, field, vector, item_state in stores:
                    scripts.refine.queue(
                        pipe,
                        memory=item.key,
                        index_meta=self.keys.index_meta,
                        content=item.content,
                        field=field,
                        vector=vector,
                        model=self.embedder.model_id,
                        state=item_state,
                    )
                pipe.delete(*(self._claim_key(item.key) for item in claimed))
                results = await scripts.execute(pipe)
        if any(int(r) == -1 for r in results[: len(claimed)]):
            raise EmbeddingMismatch(
                f"index {self.keys.index_alias} no longer records contextual model "
                f"{self.embedder.model_id!r} (reindexed); restart the worker with the "
                "configured contextual_embedder"
            )
        done = sum(1 for r in results[: len(claimed)] if int(r) == 1)
        if self.draft is not None and state == "done":
            self.redone += done
        log.debug("refined %d memories (%s)", done, state)
        return done
