"""Reaching Redis: the configured URL, or the embedded server started on demand.

With the embedded server, the persistence profile in effect is the one the
server runs with (recorded in its ``server.json``) unless a profile is
configured explicitly; an explicit profile that disagrees with the running
server is used, and reported (``profile_conflict``). A server started on
demand takes the profile its data dir last ran with, unless one is configured. With no URL, a local
cluster started in ``server_dir`` (``server start --cluster N``) is used when
it runs. Every connection sends ``ConnectionSettings.redis_password`` when one
is set (a password in the URL wins). A ``redis+cluster://`` URL (or ``cluster =
true``) opens the cluster client (``cluster.py``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import redis.asyncio as aioredis
from pydantic import SecretStr

from hindsight_redis.core.resp import RESP_PROTOCOL
from hindsight_redis.errors import ConfigError, redis_errors
from hindsight_redis.redis.cluster import cluster_url, is_cluster_url, list_indexes, open_cluster
from hindsight_redis.redis.server import (
    EmbeddedServer,
    PersistenceProfile,
    get_profile,
    remembered_profile,
)
from hindsight_redis.redis.server.local_cluster import LocalCluster
from hindsight_redis.settings import (
    ConnectionSettings,
    ServerSettings,
    WorkerSettings,
    redact_url,
    redis_url_problem,
)

logger = logging.getLogger(__name__)
SOCKET_TIMEOUT_S = 5.0  # longest wait for a reply before RedisUnavailable


@dataclass(frozen=True, slots=True)
class Target:
    """Where to connect, with which password, and the persistence profile in effect there."""

    url: str
    profile: PersistenceProfile
    password: SecretStr | None = None

    @property
    def cluster(self) -> bool:
        """True when the target is a Redis Cluster (a ``redis+cluster://`` URL)."""
        return is_cluster_url(self.url)


def embedded_server(connection: ConnectionSettings, server: ServerSettings) -> EmbeddedServer:
    """The embedded server of ``server``, with the password of ``connection`` and its
    profile: the one configured explicitly, else the one the data dir last ran with, else
    the default (not started)."""
    profile: str = connection.profile
    if "profile" not in connection.model_fields_set:
        profile = remembered_profile(server.server_dir) or profile
    return EmbeddedServer(
        server.server_dir,
        get_profile(profile),
        port=server.server_port,
        bind=server.server_bind,
        start_timeout_s=server.server_start_timeout_s,
        password=connection.redis_password,
    )


def local_cluster(
    connection: ConnectionSettings,
    server: ServerSettings,
    *,
    masters: int = 3,
    replicas: int = 0,
    port: int = 7000,
) -> LocalCluster:
    """The local cluster of ``server_dir`` (``server start --cluster``; not started)."""
    return LocalCluster(
        server.server_dir / "cluster",
        get_profile(connection.profile),
        masters=masters,
        replicas=replicas,
        port=port,
        bind=server.server_bind,
        start_timeout_s=server.server_start_timeout_s,
        password=connection.redis_password,
    )


def profile_conflict(connection: ConnectionSettings, running: str) -> str | None:
    """What to say when the configured profile is explicit and not the server's; else None."""
    if "profile" not in connection.model_fields_set or connection.profile == running:
        return None
    return (
        f"the embedded server runs with profile {running!r}, but profile "
        f"{connection.profile!r} is configured (HINDSIGHT_PROFILE, --profile or the config "
        f"file); restart it with `hindsight-redis server stop && hindsight-redis server "
        f"start --profile {connection.profile}`, or drop the setting to use {running!r}"
    )


def resolve(connection: ConnectionSettings, server: ServerSettings) -> Target:
    """The Redis to use and its profile; starts the embedded server when none is configured."""
    password = connection.redis_password
    if connection.redis_url is not None:
        url = cluster_url(connection.redis_url) if connection.cluster else connection.redis_url
        return Target(url, get_profile(connection.profile), password)
    running = local_cluster(connection, server).state()
    if running is not None:
        return Target(running.url, get_profile(running.profile), password)
    state = embedded_server(connection, server).ensure_started()
    conflict = profile_conflict(connection, state.profile)
    if conflict is None:
        return Target(state.url, get_profile(state.profile), password)
    logger.warning("%s", conflict)
    return Target(state.url, get_profile(connection.profile), password)


async def connect(
    connection: ConnectionSettings, server: ServerSettings, worker: WorkerSettings
) -> aioredis.Redis:
    """An asyncio Redis client that answers PING (see ``open_redis``), its replies
    awaited ``worker_block_ms`` longer than ``SOCKET_TIMEOUT_S``."""
    target = await asyncio.to_thread(resolve, connection, server)
    # A worker's XREADGROUP blocks up to worker_block_ms: the reply may take that much longer.
    timeout_s = SOCKET_TIMEOUT_S + worker.worker_block_ms / 1000
    return await open_redis(target.url, target.password, timeout_s=timeout_s, connection=connection)


async def open_redis(
    url: str,
    password: SecretStr | None = None,
    *,
    timeout_s: float = SOCKET_TIMEOUT_S,
    connection: ConnectionSettings | None = None,
) -> aioredis.Redis:
    """An asyncio Redis client for ``url`` that answers PING.

    ``password`` is sent unless the URL has one. ``RedisUnavailable`` when
    nothing answers, ``NotARedisServer`` when something does but not in
    Redis's protocol, ``RedisAccessDenied`` for a missing or wrong password.
    A call that gets no reply within ``timeout_s`` (a hung or partitioned
    server) raises ``RedisUnavailable`` too. A cluster URL gives the cluster
    client (``connection``: ``read_from_replicas``, ``cluster_retry_s``). A URL
    that is not a Redis one is ``ConfigError``.
    """
    problem = redis_url_problem(url)
    if problem is not None:
        raise ConfigError(f"redis_url: {problem}")
    if is_cluster_url(url):
        client = open_cluster(
            url,
            password,
            read_from_replicas=connection is not None and connection.read_from_replicas,
            retry_s=15.0 if connection is None else connection.cluster_retry_s,
            timeout_s=timeout_s,
        )
    else:
        client = _open_server(url, password, timeout_s)
    try:
        with redis_errors(f"connect to Redis at {redact_url(url)}"):
            await client.ping()
    except BaseException:
        await client.aclose()
        raise
    return client


def _open_server(url: str, password: SecretStr | None, timeout_s: float) -> aioredis.Redis:
    return aioredis.Redis.from_url(
        url,
        protocol=RESP_PROTOCOL,
        decode_responses=False,
        health_check_interval=30,
        password=plain_password(password),
        # Explicit: redis-py before 8 waits forever for a server that stopped answering.
        socket_timeout=timeout_s,
        socket_connect_timeout=SOCKET_TIMEOUT_S,
    )


async def require_search(client: aioredis.Redis, action: str = "index memories") -> None:
    """``SearchModuleMissing`` unless the server has the search module (FT.*)."""
    with redis_errors(action):
        await list_indexes(client)


def plain_password(password: SecretStr | None) -> str | None:
    """The ``password=`` of redis-py's ``from_url`` (a password in the URL wins over it)."""
    return None if password is None else password.get_secret_value()
