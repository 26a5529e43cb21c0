"""What every command shares: settings from the flags, one client per command, JSON output."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from hindsight_redis.settings import Settings, load_settings

if TYPE_CHECKING:
    from hindsight_redis.client.async_client import AsyncMemoryClient

T = TypeVar("T")

Handler = Callable[[argparse.Namespace, Settings], int]
ABOUT = (
    "hindsight-redis: a shared, searchable long-term memory for LLM agents, on Redis. "
    "Agents write memories; workers filter, summarize, embed and index them; "
    "search finds them by meaning and by keyword."
)


def print_json(value: Any) -> None:
    def default(obj: Any) -> Any:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return dataclasses.asdict(obj)
        return str(obj)

    print(json.dumps(value, indent=2, ensure_ascii=False, default=default))


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    for name in ("redis_url", "namespace", "profile", "server_dir", "server_port", "embedder"):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    if getattr(args, "as_agent", None) is not None:
        overrides["agent_id"] = args.as_agent
    return load_settings(**overrides)


def check_port_free(host: str, port: int) -> None:
    """``PortInUse`` when ``host:port`` is taken, ``InvalidArgument`` when it cannot be bound
    at all: checked before a command prints its banner and starts serving HTTP there."""
    import errno
    import socket

    from hindsight_redis.errors import InvalidArgument, PortInUse

    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            sock.bind((host, port))
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"port {port} on {host} is taken (by another server, or another copy of this "
                "one): choose another with --port"
            ) from None
        raise InvalidArgument(
            f"cannot listen on {host}:{port} ({e.strerror or e}): check --host and --port"
        ) from None


async def with_client(
    settings: Settings, action: Callable[[AsyncMemoryClient], Coroutine[Any, Any, T]]
) -> T:
    """``action(client)`` on a client of ``settings``, closed afterwards."""
    from hindsight_redis.client.async_client import AsyncMemoryClient

    async with AsyncMemoryClient(settings) as client:
        return await action(client)
