"""Which ``Host`` (and ``Origin``) a server answers: the defence against DNS rebinding.

A page on another site can make the visitor's browser resolve that site's name to
127.0.0.1 and then read, or post to, whatever listens there; the browser still sends
the site's name as the ``Host`` header (and its origin as ``Origin`` on a POST). So
both HTTP servers answer only the names they serve, with the MCP SDK's own check
(``TransportSecurityMiddleware``: 421 for a foreign ``Host``, 403 for a foreign
``Origin``): the MCP server on loopback (beyond it, bearer tokens guard every request,
and containers reach it by service names this process cannot know), the console
always (``HostCheck``, which also holds a POST's ``Referer`` to the same origins).

The names served (``served_hosts``): on a loopback address, ``127.0.0.1``,
``localhost`` and ``[::1]``; on another address, that address; on a wildcard
(``0.0.0.0``, ``::``), this machine's names and addresses and the loopback ones;
with any port, plus the names given (``--allow-host``: a DNS name or a proxy's).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import HTTPConnection

from hindsight_redis.settings import is_loopback

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _bracketed(name: str) -> str:
    """A host as a ``Host`` header writes it (an IPv6 address in brackets)."""
    try:
        return f"[{name}]" if ipaddress.ip_address(name).version == 6 else name
    except ValueError:
        return name


def _machine_names() -> list[str]:
    """This machine's host names and the addresses they resolve to (a wildcard bind)."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
        except OSError:
            continue
    return sorted(_bracketed(n.split("%")[0]) for n in names if n)


def served_hosts(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The host names a server bound to ``host`` answers as (see the module doc)."""
    if is_loopback(host):
        names = list(LOOPBACK_NAMES)
    elif host in ("", "0.0.0.0", "::", "*"):
        names = [*LOOPBACK_NAMES, *_machine_names()]
    else:
        names = [_bracketed(host)]
    return list(dict.fromkeys([*names, *(_bracketed(n) for n in extra)]))


def host_security(host: str, extra: Sequence[str] = ()) -> TransportSecuritySettings:
    """The SDK's DNS rebinding settings for a server bound to ``host``: the served
    names with any port, and the origins of those names."""
    names = served_hosts(host, extra)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for name in names for pattern in (name, f"{name}:*")],
        allowed_origins=[
            pattern
            for name in names
            for scheme in ("http", "https")
            for pattern in (f"{scheme}://{name}", f"{scheme}://{name}:*")
        ],
    )


class HostCheck:
    """ASGI middleware: a request with a foreign ``Host`` gets 421, one with a foreign
    ``Origin`` (or, on a POST without one, a foreign ``Referer``) 403; the rest go on."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings) -> None:
        self.app = app
        self.guard = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = HTTPConnection(scope)
        refused = await self.guard.validate_request(request)
        referer = request.headers.get("referer")
        if (
            refused is None
            and scope.get("method") == "POST"
            and referer
            and "origin" not in request.headers
        ):
            refused = await self.guard.validate_request(_with_origin(scope, _origin_of(referer)))
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _origin_of(url: str) -> str:
    """The origin (``scheme://host[:port]``) of a URL."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if rest else url


def _with_origin(scope: Scope, origin: str) -> HTTPConnection:
    """The request of ``scope`` as if it carried ``origin`` as its ``Origin``."""
    headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"origin"]
    return HTTPConnection({**scope, "headers": [*headers, (b"origin", origin.encode("latin-1"))]})
