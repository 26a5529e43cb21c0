"""``AsyncMemoryClient``: what agents call to write, search and manage memories.

A write's and a search's arguments are defined and validated once
(``core.requests``); writes are encoded as versioned msgpack events and
appended to the namespace's stream (``write.writer``), and workers do
everything else. Searches run through a ``Searcher`` opened on first use.
What acts on the namespace as a whole (sweeps, cold storage, the operators' reads, conflict
review, the review of held writes, reindex) is ``client.pool``, composed into the client and
offered on it too (``client.sweep(...)`` is ``client.pool.sweep(...)``). The blocking twin
is ``client.sync_client.MemoryClient``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from redis.asyncio import Redis
from typing_extensions import Unpack

from hindsight_redis.client.evaluation import evaluate as _evaluate
from hindsight_redis.client.pool import PoolOperations, on_pool
from hindsight_redis.client.records import read_record
from hindsight_redis.client.write_edge import Provenance, WriteEdge, identified
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryRecord, SearchHit, WriteReceipt
from hindsight_redis.core.requests import (
    SEARCH_OPTIONS,
    WRITE_FIELDS,
    SearchOptions,
    WriteItem,
    WriteOptions,
    WriteRequest,
    parse_search,
    parse_write,
)
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import (
    EmbeddingMismatch,
    InvalidArgument,
    InvalidMemory,
    MemoryProtected,
    NotFound,
    RedisUnavailable,
    redis_errors,
)
from hindsight_redis.lifecycle.conflicts import undo_pairs, undoable_resolutions
from hindsight_redis.lifecycle.forgetting import archive_memory
from hindsight_redis.redis import scripts
from hindsight_redis.redis.connection import open_redis, require_search, resolve
from hindsight_redis.redis.server.profiles import get_profile
from hindsight_redis.search.searcher import Searcher
from hindsight_redis.settings import Settings
from hindsight_redis.trust.audit import CALLER_HOW
from hindsight_redis.write.session_tails import SessionTails, context_depth
from hindsight_redis.write.writer import StreamWriter


class AsyncMemoryClient:
    """Write, search and manage memories of one namespace (asyncio).

    Use as ``async with AsyncMemoryClient(settings) as client: ...``, or call
    ``connect()`` / ``aclose()`` yourself. With no ``redis_url`` the embedded
    server is started on first use. Building a client does no I/O.
    """

    def __init__(self, settings: Settings | None = None, *, redis: Redis | None = None) -> None:
        self.settings = settings or Settings()
        self.keys = Keys(self.settings.key_prefix, self.settings.namespace)
        self.profile = get_profile(self.settings.profile)  # until connect() knows the server
        self._redis = redis
        self._owns_redis = redis is None
        self._connecting = asyncio.Lock()
        self._searcher: Searcher | None = None
        self._search_checked = False
        self._limits = self.settings.write  # read for every write: the view is built once
        self._edge = WriteEdge(self.settings, self.keys)  # the secrets policy
        self._agent_id = self.settings.agent_id
        self._trusted_only = self.settings.trust.trusted_only
        self._writer = StreamWriter(self._limits, self.keys)
        self._tails = SessionTails()  # write_many's context_from_previous, across calls
        self.pool = PoolOperations(self)
        """Sweeps, cold storage, stats, dead letters, conflict review and reindex."""

    async def __aenter__(self) -> AsyncMemoryClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def connect(self) -> Redis:
        """Open the connection (starting the embedded server if needed).

        On the embedded server, ``profile`` becomes the one the server runs
        with, unless one is configured explicitly.
        """
        if self._redis is None:
            async with self._connecting:  # concurrent first calls (a model's tools): one pool
                if self._redis is None:
                    target = await asyncio.to_thread(
                        resolve, self.settings.connection, self.settings.server
                    )
                    self.profile = target.profile
                    self._redis = await open_redis(
                        target.url, target.password, connection=self.settings.connection
                    )
        return self._redis

    async def aclose(self) -> None:
        """Close the connection this client opened."""
        if self._searcher is not None:
            await self._searcher.aclose()
        if self._redis is not None and self._owns_redis:
            await self._redis.aclose()
            self._redis = None
            self._searcher = None

    @property
    def redis(self) -> Redis:
        """The underlying client; ``connect()`` first."""
        if self._redis is None:
            raise RedisUnavailable("client is not connected: call connect() or use 'async with'")
        return self._redis

    # -- identity ---------------------------------------------------------------

    def caller(self, as_agent: str | None = None) -> str:
        """Who a call acts as: ``as_agent`` when given, else ``Settings.agent_id``."""
        if as_agent is None:
            return self.settings.agent_id
        if not isinstance(as_agent, str) or len(as_agent) > 256:
            raise InvalidArgument("as_agent must be a string of at most 256 characters")
        problem = text_problem(as_agent, controls=False)
        if problem is not None:
            raise InvalidArgument(f"as_agent {problem}")
        return as_agent

    def provenance(self, as_agent: str | None = None) -> str:
        """How the caller of a call was identified: ``token`` (a service calling with an HTTP
        token's identity: ``trust.audit.identified_by``), ``argument`` (``as_agent``),
        ``settings`` (``Settings.agent_id``), or "" (no identity: an operator)."""
        told = CALLER_HOW.get()
        if told:
            return told
        if as_agent is not None:
            return "argument"
        return "settings" if self.settings.agent_id else ""

    def _viewer(self, as_agent: str | None) -> str | None:
        """Whose view a read by id gets; None for a caller with no identity (an operator)."""
        if as_agent is None and not self.settings.agent_id:
            return None
        return self.caller(as_agent)

    # -- writes ---------------------------------------------------------------

    def _request(
        self,
        fields: Mapping[str, Any],
        caller: str,
        identified_by: Provenance | None = None,
        hold: str | None = None,
    ) -> WriteRequest:
        """A write's fields validated; the caller is its writer unless it names one.

        Its provenance: ``identified_by`` when a service identified the caller (a
        token), else ``settings`` when the writer is this process's ``agent_id``, else
        ``argument`` (a name the library caller gave), else "" (no writer).
        """
        writer = fields.get("agent_id")
        if writer is None:
            writer = caller
            if caller:
                fields = {**fields, "agent_id": caller}
        if identified_by is not None:
            provenance: str = identified_by
        elif writer:  # inline, not a call: it runs for every item of a batch
            provenance = "settings" if writer == self._agent_id else "argument"
        else:
            provenance = ""
        limits = self._limits
        return parse_write(
            fields,
            namespace=self.keys.namespace,
            max_content_chars=limits.max_content_chars,
            max_tags=limits.max_tags,
            default_wait_s=limits.write_wait_timeout_s,
            provenance=provenance,
            hold=hold,
        )

    async def write(
        self,
        content: str,
        *,
        as_agent: str | None = None,
        identified_by: Provenance | None = None,
        **options: Unpack[WriteOptions],
    ) -> WriteReceipt:
        """Accept one memory; returns at once unless ``wait=True``.

        ``options`` are the fields of ``core.requests.WriteOptions``, each
        described there. The memory is recorded as written by ``agent_id``
        when given (the library is trusted), else by the caller (``as_agent``,
        else ``Settings.agent_id``). ``visibility="private"`` keeps it to its
        writer; an ``idempotency_key`` makes a retried write a no-op; with
        ``wait=True`` the receipt comes once the memory is searchable (or says
        why it was dropped), within ``timeout_s`` (default
        ``write_wait_timeout_s``; 0 looks once). ``context`` (e.g. the previous
        message) is embedded with the content for the contextual vector only;
        its last 600 bytes are kept, and ``get()`` shows them.

        Secrets in the content, context, source or tags are masked, or the write
        dropped or held, as the ``secrets`` setting says (``trust.edge``).
        ``identified_by="token"`` is for services that identified the caller by a
        token (the MCP and HTTP servers): the memory records it as its provenance.
        """
        _known_keywords("write", options, WRITE_FIELDS)
        fields: Mapping[str, Any] = {"content": content, **options}
        screened = self._edge.screen(fields)
        hold = None
        if screened is not None:
            fields, hold = screened.fields, screened.hold
        caller = self.caller(as_agent)
        request = self._request(fields, caller, identified(identified_by), hold)
        redis = self._redis or await self.connect()
        if screened is not None and screened.dropped:
            return (await self._edge.drop(redis, [request], [screened]))[0]
        if request.wait_s is not None:
            await self._require_search(redis)
        durable = self.profile.wait_aof
        if request.keyed:
            receipt = (await self._writer.append(redis, [request.event], [True], durable=durable))[
                0
            ]
        else:
            receipt = await self._writer.append_one(redis, request.event, durable=durable)
        return (await self._settle(redis, [receipt], [request]))[0]

    async def write_many(
        self,
        items: Sequence[WriteItem | Mapping[str, Any]],
        *,
        context_from_previous: int = 0,
        as_agent: str | None = None,
        identified_by: Provenance | None = None,
    ) -> list[WriteReceipt]:
        """Accept a batch in one round trip; every item is validated first.

        Each item is a dict of the arguments of ``write`` (``content`` and the
        ``WriteOptions``). The batch is accepted whole or not at all.

        ``context_from_previous=N`` (a transcript): an item with a
        ``session_id`` and no ``context`` of its own gets the contents of the
        ``N`` previous items of its session, oldest first. The client
        remembers each session's last contents across calls (the 1,000 most
        recent sessions), so a transcript written in batches keeps its
        context; a private item's content is context only for its owner's.
        Secrets are screened item by item as ``write`` does, before contexts are
        filled: a context quotes earlier items masked. Items dropped for a secret get
        their receipts (``dropped``) beside the others'.
        """
        if isinstance(items, Mapping | str | bytes) or not isinstance(items, Iterable):
            raise InvalidMemory("write_many takes a list of dicts")
        given: list[Mapping[str, Any]] = list(items)  # a generator is read once, here
        caller = self.caller(as_agent)
        depth = context_depth(context_from_previous)
        screened = self._edge.screen_items(given)
        tails: Mapping[Any, tuple[str, ...]] = {}
        if depth and all(isinstance(item, Mapping) for item in given):
            given, tails = self._tails.fill(given, depth, caller)
        how = identified(identified_by)
        requests = []
        for n, item in enumerate(given):
            if not isinstance(item, Mapping):
                raise InvalidMemory(f"item {n} is not a dict")
            verdict = screened.get(n) if screened else None
            try:
                if verdict is None:
                    requests.append(self._request(item, caller, how))
                else:
                    requests.append(
                        self._request(verdict.restored(item), caller, how, verdict.hold)
                    )
            except InvalidMemory as e:
                raise InvalidMemory(f"item {n}: {e}") from None
        if not requests:
            return []
        redis = self._redis or await self.connect()
        kept = requests
        if any(verdict.dropped for verdict in screened.values()):
            kept = [
                r for n, r in enumerate(requests) if n not in screened or not screened[n].dropped
            ]
        if any(r.wait_s is not None for r in kept):
            await self._require_search(redis)
        receipts: list[WriteReceipt] = []
        if kept:
            events, keyed = [r.event for r in kept], [r.keyed for r in kept]
            receipts = await self._writer.append(
                redis, events, keyed, durable=self.profile.wait_aof
            )
        self._tails.remember(tails)  # only once accepted: a retried batch gets the same contexts
        receipts = await self._settle(redis, receipts, kept)
        return (
            await self._edge.with_drops(redis, requests, screened, receipts)
            if screened
            else receipts
        )

    async def _require_search(self, redis: Redis) -> None:
        """Before a ``wait=True`` write: without the search module it could only time out."""
        if not self._search_checked:
            await require_search(redis, "wait for the write")
            self._search_checked = True

    async def _settle(
        self, redis: Redis, receipts: list[WriteReceipt], requests: Sequence[WriteRequest]
    ) -> list[WriteReceipt]:
        """After the append (and its AOF fsync: durable profile), the awaited outcomes."""
        for n, request in enumerate(requests):
            if request.wait_s is not None:
                receipts[n] = await self._writer.wait_outcome(redis, receipts[n], request.wait_s)
        return receipts

    # -- search ---------------------------------------------------------------

    async def search(
        self, query: str, *, as_agent: str | None = None, **options: Unpack[SearchOptions]
    ) -> list[SearchHit]:
        """Hybrid (vector + keyword), vector or keyword search with metadata filters.

        ``options`` are the fields of ``core.requests.SearchOptions``, each
        described there (``top_k``, ``mode``, the filters, ``max_tokens``). The
        caller (``as_agent``, else ``Settings.agent_id``) sees the shared
        memories and its own private ones; ``agent_id`` keeps those written by
        that agent; ``tags`` must all be present; ``since``/``until`` bound
        ``created_at``, ``occurred_since``/``occurred_until`` bound
        ``occurred_at`` (only memories that have one match); ``trusted_only``
        keeps the memories of identified writers and reviewed ones (always, when
        the namespace's ``trusted_only`` setting is on). Bad arguments raise
        ``InvalidQuery``.
        """
        _known_keywords("search", options, SEARCH_OPTIONS)
        if self._trusted_only:  # the namespace requires it: an argument cannot lift it
            options = {**options, "trusted_only": True}
        request = parse_search(query, options, viewer=self.caller(as_agent))
        try:
            return await (self._searcher or await self._open_searcher()).run(request)
        except EmbeddingMismatch:
            # A reindex moved the index under this client: open it again once.
            # If this client's embedder is not the new one, opening says so.
            self._searcher = None
            return await (await self._open_searcher()).run(request)

    async def _open_searcher(self) -> Searcher:
        redis = await self.connect()
        async with self._connecting:  # concurrent first searches: one searcher, none leaked
            if self._searcher is None:
                self._searcher = await Searcher.open(redis, self.keys, self.settings)
            return self._searcher

    def index_changed(self) -> None:
        """The index may have been created or rebuilt: the next search opens it anew."""
        self._searcher = None

    # -- one memory -------------------------------------------------------------

    async def get(self, memory_id: str, *, as_agent: str | None = None) -> MemoryRecord | None:
        """The memory with this id (active, archived, merged, dropped, held or rejected), or
        None.

        For a caller with an identity, another agent's private memory is None,
        as if it did not exist; so is a write held for review (or rejected): only
        an operator (a caller with no identity) sees those.
        """
        _check_id(memory_id)
        viewer = self._viewer(as_agent)
        return await read_record(await self.connect(), self.keys, memory_id, viewer)

    async def _require_visible(self, memory_id: str, as_agent: str | None) -> None:
        """``NotFound`` unless the caller may see the memory."""
        if await self.get(memory_id, as_agent=as_agent) is None:
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")

    async def _set_fields(
        self, memory_id: str, as_agent: str | None = None, **fields: str
    ) -> MemoryRecord:
        _check_id(memory_id)
        await self._require_visible(memory_id, as_agent)
        redis = await self.connect()
        pairs = [x for pair in fields.items() for x in pair]
        with redis_errors("update the memory"):
            updated = await scripts.update_existing(
                redis, memory=self.keys.doc(memory_id), fields=pairs
            )
        if not updated:
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")
        record = await self.get(memory_id, as_agent=as_agent)
        assert record is not None
        return record

    async def forget(
        self, memory_id: str, *, force: bool = False, as_agent: str | None = None
    ) -> MemoryRecord:
        """Archive a memory: it leaves search results but can be restored.

        A protected memory raises ``MemoryProtected`` unless ``force=True``.
        With ``as_agent``, another agent's private memory is ``NotFound``.
        """
        _check_id(memory_id)
        if not isinstance(force, bool):
            raise InvalidArgument("force must be true or false")
        await self._require_visible(memory_id, as_agent)
        code = await archive_memory(await self.connect(), self.keys, memory_id, force=force)
        if code == 0:
            raise NotFound(f"no memory {memory_id!r} in namespace {self.settings.namespace!r}")
        if code < 0:
            raise MemoryProtected(
                f"memory {memory_id!r} is protected; forget it with force=True "
                "(CLI --force, MCP force) or lift the protection first (protect(id, False); "
                f"CLI `hindsight-redis protect --off {memory_id}`)"
            )
        await self.pool.record("forget", as_agent=as_agent, ids=[memory_id], force=int(force))
        record = await self.get(memory_id, as_agent=as_agent)
        assert record is not None
        return record

    async def restore(self, memory_id: str, *, as_agent: str | None = None) -> MemoryRecord:
        """Bring an archived memory back into search results.

        It also undoes a conflict review (``resolve_conflict``): the memory a
        review archived comes back, and restoring the one it kept brings back
        the others; either way the pair is flagged as conflicting again.
        """
        record = await self.get(memory_id, as_agent=as_agent)
        partners = undoable_resolutions(record) if record is not None else []
        visible = [p for p in partners if await self.get(p, as_agent=as_agent) is not None]
        if visible:
            by = self.caller(as_agent) or "operator"
            undone = await undo_pairs(await self.connect(), self.keys, memory_id, visible, by=by)
            await self.pool.record(
                "resolve", as_agent=as_agent, ids=[memory_id, *visible], keep="undo", undone=undone
            )
            record = await self.get(memory_id, as_agent=as_agent)
            if record is not None and record.status != "archived":
                await self.pool.record("restore", as_agent=as_agent, ids=[memory_id])
                return record
        restored = await self._set_fields(
            memory_id, as_agent, status="active", archived_at="", archive_reason=""
        )
        await self.pool.record("restore", as_agent=as_agent, ids=[memory_id])
        return restored

    async def protect(
        self, memory_id: str, protected: bool = True, *, as_agent: str | None = None
    ) -> MemoryRecord:
        """Mark a memory as protected from retention sweeps (or lift the mark)."""
        return await self._set_fields(memory_id, as_agent, protected="1" if protected else "0")

    # -- the namespace as a whole: ``client.pool``'s methods, offered here too ---------

    sweep = on_pool(PoolOperations.sweep)
    export = on_pool(PoolOperations.export)
    purge_exported = on_pool(PoolOperations.purge_exported)
    import_file = on_pool(PoolOperations.import_file)
    stats = on_pool(PoolOperations.stats)
    dead_letters = on_pool(PoolOperations.dead_letters)
    replay_dead_letters = on_pool(PoolOperations.replay_dead_letters)
    conflicts = on_pool(PoolOperations.conflicts)
    resolve_conflict = on_pool(PoolOperations.resolve_conflict)
    conflict_resolutions = on_pool(PoolOperations.conflict_resolutions)
    held = on_pool(PoolOperations.held)
    approve = on_pool(PoolOperations.approve)
    reject = on_pool(PoolOperations.reject)
    reindex = on_pool(PoolOperations.reindex)
    erase = on_pool(PoolOperations.erase)
    audit = on_pool(PoolOperations.audit)
    evaluate = _evaluate


def _known_keywords(method: str, options: Mapping[str, Any], known: Sequence[str]) -> None:
    """What Python says of a keyword a method does not take (its options are typed, not
    spelled out in its signature)."""
    unknown = sorted(options.keys() - set(known))
    if unknown:
        raise TypeError(
            f"AsyncMemoryClient.{method}() got an unexpected keyword argument {unknown[0]!r}"
        )


def _check_id(memory_id: str) -> None:
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 128:
        raise InvalidMemory("memory id must be a non-empty string of at most 128 characters")
    if any(c in memory_id for c in "{}:* \n") or text_problem(memory_id, controls=False):
        raise InvalidMemory(f"invalid memory id {memory_id!r}")
