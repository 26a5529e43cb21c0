"""Reaching Redis: the configured URL, or the embedded server started on demand."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from hindsight_redis.errors import MissingSearchModule, RedisUnavailable
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
    """An asyncio Redis client that answers PING; ``RedisUnavailable`` otherwise."""
    url = await asyncio.to_thread(resolve_url, settings)
    client = aioredis.Redis.from_url(url, decode_responses=False, health_check_interval=30)
    try:
        await client.ping()
    except (RedisConnectionError, RedisTimeoutError, OSError) as e:
        await client.aclose()
        raise RedisUnavailable(f"cannot reach Redis at {_safe(url)}: {e}") from e
    return client


async def require_search(client: aioredis.Redis) -> None:
    """``MissingSearchModule`` unless the server has the search module (FT.*)."""
    try:
        await client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]
    except ResponseError as e:
        raise MissingSearchModule(
            "this Redis has no search module (FT.* commands are unknown): use Redis 8 "
            "(its query engine is built in), Redis Stack, or unset HINDSIGHT_REDIS_URL "
            "to use the embedded server"
        ) from e


def _safe(url: str) -> str:
    """The URL without its password, for error messages."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.split('@', 1)[1]}"
