"""The MCP server over streamable HTTP: bearer tokens, ``/metrics``, an in-process worker.

``BearerAuth`` is plain ASGI around the SDK's app. A request carrying
``Authorization: Bearer <token>`` acts as that token's principal (checked on
every request, so a revoked token stops at once); one with a bad token, or
with none where tokens are required, gets 401 and reaches nothing. Tokens
are required whenever the server binds beyond loopback and, on loopback,
as soon as any token exists. Headers are never logged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import anyio
from redis.asyncio import Redis
from starlette.routing import Route

from hindsight_redis.errors import HindsightError
from hindsight_redis.ops.metrics import metrics_app
from hindsight_redis.service.mcp import PRINCIPAL_STATE, ToolClients, build_server
from hindsight_redis.service.tokens import any_tokens, verify_token
from hindsight_redis.service.workers import background_workers
from hindsight_redis.settings import Settings, is_loopback

log = logging.getLogger(__name__)
METRICS_PATH = "/metrics"
METRICS_SCOPE = "the metrics of every namespace need an admin token"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
_SDK_LOGGERS = (
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.lowlevel.server",
)


class BearerAuth:
    """ASGI middleware: the request's token becomes its principal, or the request gets 401."""

    def __init__(
        self, app: ASGIApp, redis: Callable[[], Awaitable[Redis]], prefix: str, *, loopback: bool
    ) -> None:
        self.app = app
        self.redis = redis
        self.prefix = prefix
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        try:
            redis = await self.redis()
            if token is not None:
                principal = await verify_token(redis, self.prefix, token)
                if principal is None:
                    await _deny(send, "invalid_token", "the token is unknown, revoked or expired")
                    return
                scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
                if scope.get("path") == METRICS_PATH and not principal.allows("admin"):
                    await _reply(send, 403, {"error": "forbidden", "detail": METRICS_SCOPE})
                    return
            elif not self.loopback or await any_tokens(redis, self.prefix):
                await _deny(send, "missing_token", "send Authorization: Bearer <token>")
                return
        except HindsightError as e:
            await _reply(send, 503, {"error": "unavailable", "detail": str(e)})
            return
        await self.app(scope, receive, send)


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, credential = value.decode("latin-1").partition(" ")
            return credential.strip() if kind.lower() == "bearer" else ""
    return None


async def _deny(send: Send, error: str, detail: str) -> None:
    await _reply(send, 401, {"error": error, "detail": detail}, [(b"www-authenticate", b"Bearer")])


async def _reply(
    send: Send, status: int, body: dict[str, str], headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class _QuietDisconnects(logging.Filter):
    """Drops the SDK's tracebacks for a client that went away (closed streams), nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (error is not None and _only_closed(error))


def _only_closed(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return all(_only_closed(e) for e in error.exceptions)
    return isinstance(error, anyio.ClosedResourceError | anyio.BrokenResourceError)


def quiet_client_disconnects() -> None:
    """Install the disconnect filter on the SDK's HTTP loggers (idempotent)."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietDisconnects) for f in logger.filters):
            logger.addFilter(_QuietDisconnects())


def build_app(
    settings: Settings, *, host: str = "127.0.0.1", port: int = 8765
) -> tuple[ASGIApp, ToolClients]:
    """The ASGI app and its clients: the MCP endpoint at ``/mcp`` and ``/metrics``.

    Both behind ``BearerAuth``; where tokens are required, ``/metrics`` (every
    namespace's figures) takes an admin token.
    """
    server, memory = build_server(settings, host=host, port=port)

    async def redis() -> Redis:
        client = await memory.client(settings.namespace)
        return client.redis

    quiet_client_disconnects()
    sdk_app = server.streamable_http_app()
    metrics = metrics_app(settings)
    sdk_app.router.routes.append(Route(METRICS_PATH, metrics))
    memory.on_close(metrics.aclose)
    app = BearerAuth(sdk_app, redis, settings.key_prefix, loopback=is_loopback(host))
    return app, memory


async def serve_http(
    settings: Settings, *, host: str = "127.0.0.1", port: int = 8765, workers: int = 1
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    import uvicorn

    app, memory = build_app(settings, host=host, port=port)
    if not is_loopback(host):
        log.warning(
            "binding %s: every request needs a bearer token (hindsight-redis token create)", host
        )
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    try:
        async with background_workers(settings, workers, all_namespaces=True):
            await uvicorn.Server(config).serve()
    finally:
        await memory.aclose()
