"""Reaching Redis: the configured URL, or the embedded server started on demand."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from hindsight_redis.errors import redis_errors
from hindsight_redis.server import EmbeddedServer, get_profile
from hindsight_redis.settings import Settings


def embedded_server(settings: Settings) -> EmbeddedServer:
    """The embedded server these settings describe (not started)."""
    return EmbeddedServer(
        settings.server_dir,
        get_profile(settings.profile),
        port=settings.server_port,
        bind=settings.server_bind,
        start_timeout_s=settings.server_start_timeout_s,
    )


def resolve_url(settings: Settings) -> str:
    """The Redis URL to use; starts the embedded server when none is configured."""
    if settings.redis_url is not None:
        return settings.redis_url
    return embedded_server(settings).ensure_started().url


async def connect(settings: Settings) -> aioredis.Redis:
    """An asyncio Redis client that answers PING.

    ``RedisUnavailable`` when nothing answers, ``NotARedisServer`` when
    something does but not in Redis's protocol, ``RedisAccessDenied`` for a
    wrong password.
    """
    url = await asyncio.to_thread(resolve_url, settings)
    client = aioredis.Redis.from_url(url, decode_responses=False, health_check_interval=30)
    try:
        with redis_errors(f"connect to Redis at {_safe(url)}"):
            await client.ping()
    except BaseException:
        await client.aclose()
        raise
    return client


async def require_search(client: aioredis.Redis, action: str = "index memories") -> None:
    """``SearchModuleMissing`` unless the server has the search module (FT.*)."""
    with redis_errors(action):
        await client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]


def _safe(url: str) -> str:
    """The URL without its password, for error messages."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.split('@', 1)[1]}"
