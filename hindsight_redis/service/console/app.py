"""The console's web app (Starlette): pages read through the client, forms change the store.

Read-only unless started with an admin token (``token create --scope
admin``): then the forms of the token's namespace resolve conflicts, restore
memories, approve or reject the writes held for review and replay dead
letters, as the token's agent (the audit trail, a page of its own, records them as
identified by ``token``). Every form carries the process's secret (``csrf``), so
another site cannot post to it; and it answers only the names it serves
(``service.hosts.HostCheck``: 421 for a foreign ``Host``), so a page of another site
cannot read it, its secret included, through DNS rebinding. A background task samples
each namespace's counters for the chart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import parse_qs

from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryRecord
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import ConfigError, HindsightError, InvalidArgument
from hindsight_redis.lifecycle.retention import RetentionPolicy
from hindsight_redis.ops.admin import recent_drops, recent_memories
from hindsight_redis.ops.health import health_of, read_staleness
from hindsight_redis.ops.render import spend_text
from hindsight_redis.ops.stats import QueueState, read_llm_spend, read_queue_states
from hindsight_redis.providers.spend import SpendBudget
from hindsight_redis.service.console import pages
from hindsight_redis.service.console.chart import History, Sample, rate_chart
from hindsight_redis.service.hosts import HostCheck, host_security
from hindsight_redis.service.tokens import Principal, verify_token
from hindsight_redis.settings import Settings
from hindsight_redis.trust.audit import ACTIONS, identified_by

log = logging.getLogger(__name__)


async def admin_principal(redis: Redis, prefix: str, token: str) -> Principal:
    """Who the console's admin token acts as; ``ConfigError`` unless it is a live admin token."""
    found = await verify_token(redis, prefix, token)
    create = "create one with `hindsight-redis token create --scope admin --agent-id NAME`"
    if found is None:
        raise ConfigError(
            f"the admin token is not a live token (unknown, revoked or expired): {create}"
        )
    if not found.allows("admin"):
        raise ConfigError(
            f"the admin token is a {found.scope} token (agent {found.agent_id!r}), "
            f"not an admin one: {create}"
        )
    return found


async def check_admin_token(settings: Settings, token: str) -> Principal:
    """``admin_principal`` on a connection of its own (before the console starts)."""
    async with AsyncMemoryClient(settings) as client:
        return await admin_principal(await client.connect(), settings.key_prefix, token)


class Console:
    """The console's state: one connection, a client per namespace, the admin, the samples."""

    def __init__(self, settings: Settings, admin_token: str | None, sample_s: float) -> None:
        self.settings = settings
        self.admin_token = admin_token
        self.admin: Principal | None = None
        self.csrf = secrets.token_urlsafe(24)
        self.history = History()
        self.sample_s = sample_s
        self._clients: dict[str, AsyncMemoryClient] = {}
        self._redis: Redis | None = None

    async def start(self) -> None:
        """Connect, and check the admin token (``ConfigError`` unless it is a live admin one)."""
        first = AsyncMemoryClient(self.settings)
        self._redis = await first.connect()
        self._clients[self.settings.namespace] = first
        if self.admin_token:
            self.admin = await admin_principal(
                self._redis, self.settings.key_prefix, self.admin_token
            )

    async def aclose(self) -> None:
        """Close the connection."""
        first = self._clients.get(self.settings.namespace)
        if first is not None:
            await first.aclose()
        self._clients.clear()

    def client(self, namespace: str) -> AsyncMemoryClient:
        """The client of ``namespace`` (sharing the one connection)."""
        if namespace not in self._clients:
            settings = self.settings.model_copy(update={"namespace": namespace})
            self._clients[namespace] = AsyncMemoryClient(settings, redis=self._redis)
        return self._clients[namespace]

    def may_change(self, namespace: str) -> bool:
        """Whether the forms of ``namespace`` are live: an admin token of that namespace."""
        return self.admin is not None and self.admin.namespace == namespace

    async def namespaces(self) -> list[str]:
        """The configured namespace, then the registry's."""
        from hindsight_redis.pipeline.namespaces import registered

        assert self._redis is not None
        known = await registered(self._redis, self.settings.key_prefix)
        return [self.settings.namespace, *sorted(set(known) - {self.settings.namespace})]

    async def states(self, namespaces: list[str]) -> list[QueueState]:
        """Counters and lag of each namespace (two round trips for all)."""
        assert self._redis is not None
        prefix = self.settings.key_prefix
        return await read_queue_states(self._redis, [Keys(prefix, n) for n in namespaces])

    async def llm_spend(self, namespace: str) -> str:
        """The namespace's LLM spend today against the budget, in one line."""
        assert self._redis is not None
        keys = Keys(self.settings.key_prefix, namespace)
        return spend_text(
            await read_llm_spend(self._redis, keys, SpendBudget.of(self.settings.llm))
        )

    async def health(self, state: QueueState) -> dict[str, Any]:
        """The namespace's memory health (``health.health_of``; its stale fraction sampled)."""
        assert self._redis is not None
        keys = Keys(self.settings.key_prefix, state.namespace)
        policy = RetentionPolicy.from_settings(self.settings.retention)
        threshold = self.settings.sweeps.sweep_threshold
        stale = await read_staleness(self._redis, keys, policy, threshold)
        return health_of(state, stale, time.time())

    async def sample_forever(self) -> None:
        """Record every namespace's counters each ``sample_s`` (the chart's data)."""
        while True:
            try:
                for state in await self.states(await self.namespaces()):
                    self.history.add(state.namespace, Sample.of(state))
            except HindsightError as e:
                log.warning("console: cannot sample the counters: %s", e)
            await asyncio.sleep(self.sample_s)


def _namespace(request: Request) -> str:
    name = str(request.path_params["namespace"])
    if len(name) > 256 or text_problem(name, controls=False) is not None:
        raise InvalidArgument(f"invalid namespace {name!r}")
    return name


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={"cache-control": "no-store"})


async def _form(request: Request, console: Console, namespace: str) -> dict[str, str]:
    """A POST's fields, once the CSRF secret and the admin's namespace are checked."""
    body = (await request.body()).decode("utf-8", "replace")
    fields = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
    if not secrets.compare_digest(fields.get("csrf", ""), console.csrf):
        raise PermissionError("the form is stale or not from this console: reload the page")
    if not console.may_change(namespace):
        raise PermissionError("read-only: start the console with an admin token of this namespace")
    return fields


def build_app(
    settings: Settings,
    *,
    admin_token: str | None = None,
    sample_s: float = 5.0,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
) -> Starlette:
    """The console's ASGI app (see the module doc), answering the names a server bound to
    ``host`` serves, and ``allowed_hosts``."""
    console = Console(settings, admin_token, sample_s)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            await console.start()  # a refused admin token: the connection is closed too
            sampler = asyncio.create_task(console.sample_forever())
            try:
                yield
            finally:
                sampler.cancel()
        finally:
            await console.aclose()

    def admin(namespace: str | None = None) -> bool:
        return console.may_change(namespace) if namespace else console.admin is not None

    async def overview(request: Request) -> Response:
        states = await console.states(await console.namespaces())
        return _html(pages.overview_page(states, time.time(), admin=admin()))

    async def namespace_view(request: Request) -> Response:
        ns = _namespace(request)
        (state,) = await console.states([ns])
        chart = rate_chart([*console.history.of(ns), Sample.of(state)])
        spend = await console.llm_spend(ns)
        health = await console.health(state)
        page = pages.namespace_page(
            state, chart, time.time(), admin=admin(ns), llm_spend=spend, health=health
        )
        return _html(page)

    async def memories(request: Request) -> Response:
        ns = _namespace(request)
        args = dict(request.query_params)
        client = console.client(ns)
        body = pages.search_form(ns, args)
        archived = bool(args.get("include_archived"))
        if args.get("q", "").strip():
            tag = args.get("tag", "").strip()
            hits = await client.search(
                args["q"],
                top_k=20,
                mode=args.get("mode", "hybrid"),  # type: ignore[arg-type]
                agent_id=args.get("agent_id") or None,
                session_id=args.get("session_id") or None,
                task_type=args.get("task_type") or None,
                tags=[tag] if tag else None,
                include_archived=archived,
            )
            body += pages.hits_table(ns, hits, time.time())
        else:
            found = await recent_memories(
                await client.connect(), client.keys, limit=50, include_archived=archived
            )
            body += pages.records_table(ns, found, time.time())
        return _html(pages.layout("Memories", body, namespace=ns, admin=admin(ns)))

    async def memory(request: Request) -> Response:
        ns = _namespace(request)
        record = await console.client(ns).get(str(request.path_params["memory_id"]))
        if record is None:
            return _html(pages.layout("Memory", "<p>No such memory.</p>", namespace=ns), 404)
        return _html(pages.memory_page(record, admin=admin(ns), csrf=console.csrf))

    async def drops(request: Request) -> Response:
        ns = _namespace(request)
        client = console.client(ns)
        found = await recent_drops(await client.connect(), client.keys, 100)
        return _html(pages.drops_page(ns, found, time.time(), admin=admin(ns)))

    async def conflicts(request: Request) -> Response:
        ns = _namespace(request)
        client = console.client(ns)
        pairs: list[tuple[MemoryRecord, MemoryRecord]] = []
        seen: set[frozenset[str]] = set()
        for record in await client.conflicts(100):
            for other_id in record.conflicts_with:
                pair = frozenset((record.id, other_id))
                other = None if pair in seen else await client.get(other_id)
                if other is None:
                    continue
                seen.add(pair)
                older, newer = sorted((record, other), key=lambda r: (r.created_at, r.id))
                pairs.append((older, newer))
        log_entries = await client.conflict_resolutions(20)
        return _html(
            pages.conflicts_page(
                ns,
                pairs,
                log_entries,
                time.time(),
                admin=admin(ns),
                csrf=console.csrf,
                notice=request.query_params.get("done", ""),
            )
        )

    async def resolve(request: Request) -> Response:
        ns = _namespace(request)
        fields = await _form(request, console, ns)
        by = console.admin.agent_id if console.admin and console.admin.agent_id else None
        with identified_by("token"):
            done = await console.client(ns).resolve_conflict(
                fields.get("memory_id", ""),
                fields.get("keep", ""),  # type: ignore[arg-type]
                other_id=fields.get("other_id") or None,
                note=fields.get("note") or None,
                as_agent=by,
            )
        archived = ", ".join(d.archived for d in done if d.archived) or "nothing"
        words = f"resolved: kept {fields.get('keep')}, archived {archived}"
        return RedirectResponse(pages.ns_url(ns, "/conflicts", done=words), status_code=303)

    async def restore(request: Request) -> Response:
        ns = _namespace(request)
        fields = await _form(request, console, ns)
        by = console.admin.agent_id if console.admin and console.admin.agent_id else None
        with identified_by("token"):
            record = await console.client(ns).restore(fields.get("memory_id", ""), as_agent=by)
        came_from = request.headers.get("referer", "")
        page = "/conflicts" if "/conflicts" in came_from else "/memories/" + record.id
        return RedirectResponse(pages.ns_url(ns, page), status_code=303)

    async def review(request: Request) -> Response:
        ns = _namespace(request)
        client = console.client(ns)
        return _html(
            pages.review_page(
                ns,
                await client.held(limit=100),
                await client.held(state="rejected", limit=20),
                time.time(),
                admin=admin(ns),
                csrf=console.csrf,
                notice=request.query_params.get("done", ""),
            )
        )

    async def decide(request: Request) -> Response:
        ns = _namespace(request)
        if request.path_params["action"] not in ("approve", "reject"):
            return _html(pages.layout("Not found", "<p>No such action.</p>", namespace=ns), 404)
        fields = await _form(request, console, ns)
        by = console.admin.agent_id if console.admin and console.admin.agent_id else None
        memory_id = fields.get("memory_id", "")
        if request.path_params["action"] == "approve":
            await console.client(ns).approve(memory_id, as_agent=by)
            words = f"approved {memory_id}: it is being indexed"
        else:
            await console.client(ns).reject(memory_id, as_agent=by)
            words = f"rejected {memory_id}"
        return RedirectResponse(pages.ns_url(ns, "/review", done=words), status_code=303)

    async def dlq(request: Request) -> Response:
        ns = _namespace(request)
        letters = await console.client(ns).dead_letters(100)
        return _html(
            pages.dlq_page(
                ns,
                letters,
                time.time(),
                admin=admin(ns),
                csrf=console.csrf,
                notice=request.query_params.get("done", ""),
            )
        )

    async def replay(request: Request) -> Response:
        ns = _namespace(request)
        fields = await _form(request, console, ns)
        ids = [fields["ids"]] if fields.get("ids") else None
        again = await console.client(ns).replay_dead_letters(ids)
        return RedirectResponse(pages.ns_url(ns, "/dlq", done=f"replayed {len(again)}"), 303)

    async def audit(request: Request) -> Response:
        ns = _namespace(request)
        args = dict(request.query_params)
        action = args.get("action") or None
        entries = await console.client(ns).audit(
            agent=args.get("agent") or None,
            action=action if action in ACTIONS else None,
            limit=200,
        )
        return _html(pages.audit_page(ns, entries, args, time.time(), admin=admin(ns)))

    async def on_error(request: Request, exc: Exception) -> Response:
        status = 403 if isinstance(exc, PermissionError) else 400
        text = f"{type(exc).__name__}: {exc}"
        return _html(
            pages.layout("Refused" if status == 403 else "Error", f"<p>{pages.esc(text)}</p>"),
            status,
        )

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    routes = [
        Route("/", overview),
        Route("/healthz", health),
        Route("/ns/{namespace}", namespace_view),
        Route("/ns/{namespace}/memories", memories),
        Route("/ns/{namespace}/memories/{memory_id}", memory),
        Route("/ns/{namespace}/drops", drops),
        Route("/ns/{namespace}/conflicts", conflicts),
        Route("/ns/{namespace}/conflicts/resolve", resolve, methods=["POST"]),
        Route("/ns/{namespace}/restore", restore, methods=["POST"]),
        Route("/ns/{namespace}/review", review),
        Route("/ns/{namespace}/review/{action:str}", decide, methods=["POST"]),
        Route("/ns/{namespace}/dlq", dlq),
        Route("/ns/{namespace}/dlq/replay", replay, methods=["POST"]),
        Route("/ns/{namespace}/audit", audit),
    ]
    handlers: dict[Any, Any] = {HindsightError: on_error, PermissionError: on_error}
    guard = Middleware(HostCheck, security=host_security(host, allowed_hosts))
    return Starlette(
        routes=routes, lifespan=lifespan, exception_handlers=handlers, middleware=[guard]
    )
