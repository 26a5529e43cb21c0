"""``token create|list|revoke``: the access tokens of the MCP HTTP transport."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from redis.asyncio import Redis

from hindsight_redis.cli.common import print_json
from hindsight_redis.redis.connection import connect
from hindsight_redis.service.tokens import TokenInfo, create_token, list_tokens, revoke_token
from hindsight_redis.settings import Settings

T = TypeVar("T")


async def _on_redis(settings: Settings, action: Callable[[Redis], Coroutine[Any, Any, T]]) -> T:
    redis = await connect(settings.connection, settings.server, settings.worker)
    try:
        return await action(redis)
    finally:
        await redis.aclose()


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(seconds))


def _table(tokens: list[TokenInfo]) -> str:
    rows = [("id", "namespace", "agent", "scope", "created (UTC)", "expires (UTC)")]
    rows += [
        (t.token_id, t.namespace, t.agent_id, t.scope, _when(t.created_at), _when(t.expires_at))
        for t in tokens
    ]
    widths = [max(len(row[n]) for row in rows) for n in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows
    )


def cmd_token(args: argparse.Namespace, settings: Settings) -> int:
    """``token create|list|revoke``."""
    prefix = settings.key_prefix
    if args.token_action == "create":
        token, info = asyncio.run(
            _on_redis(
                settings,
                lambda r: create_token(
                    r,
                    prefix,
                    namespace=settings.namespace,
                    agent_id=args.token_agent,
                    scope=args.scope,
                    ttl_days=args.ttl_days,
                ),
            )
        )
        if args.json:
            print_json({"token": token, **dataclasses.asdict(info)})
        else:
            print(token)
            print(
                f"token {info.token_id}: agent {info.agent_id!r} in namespace {info.namespace!r}, "
                f"scope {info.scope}, expires {_when(info.expires_at)}. It is shown only now; "
                "send it as 'Authorization: Bearer <token>'.",
                file=sys.stderr,
            )
        return 0
    if args.token_action == "list":
        tokens = asyncio.run(_on_redis(settings, lambda r: list_tokens(r, prefix)))
        if args.json:
            print_json(tokens)
        else:
            print(_table(tokens) if tokens else "no tokens")
        return 0
    revoked = asyncio.run(_on_redis(settings, lambda r: revoke_token(r, prefix, args.token_id)))
    if not revoked:
        print(f"no token {args.token_id!r}", file=sys.stderr)
        return 1
    print(f"revoked token {args.token_id}")
    return 0
