"""The operators' web console: ``hindsight-redis console [--port 8766]``.

Server-rendered pages (Starlette, plain forms, no JavaScript): namespaces
with their counters and lag, a memory browser (search modes, filters, each
hit's scores), recent drops with their reasons, conflicts side by side with
resolve buttons, dead letters with replay, and a chart of accepted, indexed
and dropped writes over time. Bound to loopback by default; read-only unless
started with an admin token; a request naming another host than it serves gets 421.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hindsight_redis.service.console.app import build_app
from hindsight_redis.settings import Settings, is_loopback

log = logging.getLogger(__name__)

__all__ = ["build_app", "serve_console"]


def serve_console(
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    admin_token: str | None = None,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the console until interrupted; it answers the names a server bound to
    ``host`` serves, and ``allowed_hosts`` (``service.hosts``)."""
    import uvicorn

    if not is_loopback(host):
        log.warning("console bound to %s: anyone who reaches it reads every namespace", host)
    app = build_app(settings, admin_token=admin_token, host=host, allowed_hosts=allowed_hosts)
    uvicorn.run(app, host=host, port=port, log_level="warning")
