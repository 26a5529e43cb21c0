"""Serve the memory tools over the transport asked for: stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
from typing import Literal

from hindsight_redis.service.http import serve_http
from hindsight_redis.service.mcp import serve_stdio
from hindsight_redis.settings import Settings


def run_server(
    settings: Settings,
    transport: Literal["stdio", "http"],
    host: str,
    port: int,
    *,
    workers: int = 1,
) -> None:
    """Serve until interrupted (stdio: until the client closes the pipe)."""
    if transport == "stdio":
        asyncio.run(serve_stdio(settings, workers=workers))
    else:
        asyncio.run(serve_http(settings, host=host, port=port, workers=workers))
