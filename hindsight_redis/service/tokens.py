"""Access tokens of the HTTP transport: who a request acts as, and what it may do.

A token is shown once, when created; Redis keeps only its SHA-256, under the
key prefix, with the namespace, agent and scope it grants (and an expiry).
A token fixes the namespace and agent of every call made with it: tool
arguments cannot widen them. Scopes nest: ``read`` < ``write`` < ``admin``
(an admin token may also record another agent as a memory's writer).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal, get_args

from redis.asyncio import Redis

from hindsight_redis.core.keys import token_key, token_registry
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import InvalidArgument, redis_errors

Scope = Literal["read", "write", "admin"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
TOKEN_PREFIX = "hrt"
_TOKEN = re.compile(rf"^{TOKEN_PREFIX}_([0-9a-f]{{12}})_[A-Za-z0-9_-]{{43}}$")
_MAX_NAME = 256


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a call acts as: a namespace, an agent (maybe anonymous) and a scope."""

    namespace: str
    agent_id: str
    scope: Scope
    token_id: str = ""

    def allows(self, needed: Scope) -> bool:
        """Whether this principal's scope covers ``needed``."""
        return SCOPES.index(self.scope) >= SCOPES.index(needed)


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """What ``token list`` shows: never the token itself."""

    token_id: str
    namespace: str
    agent_id: str
    scope: Scope
    created_at: float
    expires_at: float | None

    def principal(self) -> Principal:
        """The identity this token grants."""
        return Principal(self.namespace, self.agent_id, self.scope, self.token_id)


def hash_token(token: str) -> str:
    """The SHA-256 (hex) Redis stores in place of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def _check_name(what: str, value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_NAME:
        raise InvalidArgument(f"{what} must be a non-empty string of at most {_MAX_NAME} chars")
    if any(c in value for c in "{}\n\r"):
        raise InvalidArgument(f"{what} must not contain braces or line breaks")
    return value


def _check_scope(scope: object) -> Scope:
    if scope not in SCOPES:
        raise InvalidArgument(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


async def create_token(
    redis: Redis,
    prefix: str,
    *,
    namespace: str,
    agent_id: str,
    scope: Scope = "write",
    ttl_days: float | None = None,
) -> tuple[str, TokenInfo]:
    """A new token for ``agent_id`` in ``namespace``: (the token, shown once; its record)."""
    namespace, agent_id = _check_name("namespace", namespace), _check_name("agent_id", agent_id)
    scope = _check_scope(scope)
    if ttl_days is not None and (
        isinstance(ttl_days, bool) or not isinstance(ttl_days, int | float) or ttl_days <= 0
    ):
        raise InvalidArgument(f"ttl_days must be a positive number of days, got {ttl_days!r}")
    token_id = secrets.token_hex(6)
    token = f"{TOKEN_PREFIX}_{token_id}_{secrets.token_urlsafe(32)}"
    now = time.time()
    expires_at = None if ttl_days is None else now + ttl_days * 86_400
    info = TokenInfo(token_id, namespace, agent_id, scope, now, expires_at)
    key = token_key(prefix, hash_token(token))
    fields: dict[Any, Any] = {
        "token_id": token_id,
        "namespace": namespace,
        "agent_id": agent_id,
        "scope": scope,
        "created_at": repr(now),
        "expires_at": "" if expires_at is None else repr(expires_at),
    }
    with redis_errors("create the token"):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping=fields)
            if expires_at is not None:
                pipe.expireat(key, int(expires_at) + 1)
            pipe.hset(token_registry(prefix), token_id, hash_token(token))
            await pipe.execute()
    return token, info


def _info(fields: dict[str, str]) -> TokenInfo | None:
    try:
        expires = fields.get("expires_at", "")
        return TokenInfo(
            token_id=fields["token_id"],
            namespace=fields["namespace"],
            agent_id=fields["agent_id"],
            scope=_check_scope(fields["scope"]),
            created_at=float(fields["created_at"]),
            expires_at=float(expires) if expires else None,
        )
    except (KeyError, ValueError, InvalidArgument):
        return None  # not a record this version wrote: grants nothing


async def verify_token(redis: Redis, prefix: str, token: str) -> Principal | None:
    """The principal a presented token grants, or None (unknown, revoked, expired, malformed)."""
    match = _TOKEN.match(token)
    if match is None:
        return None
    digest = hash_token(token)
    with redis_errors("check the token"):
        raw = await redis.hgetall(token_key(prefix, digest))
    info = _info({as_text(k): as_text(v) for k, v in raw.items()})
    if info is None or not hmac.compare_digest(info.token_id, match.group(1)):
        return None
    if info.expires_at is not None and info.expires_at <= time.time():
        return None
    return info.principal()


async def any_tokens(redis: Redis, prefix: str) -> bool:
    """Whether any token was created under ``prefix`` (and not revoked)."""
    with redis_errors("check for tokens"):
        return bool(await redis.hlen(token_registry(prefix)))


async def list_tokens(redis: Redis, prefix: str) -> list[TokenInfo]:
    """Every live token's record, oldest first; expired ones are forgotten as they are met."""
    with redis_errors("list the tokens"):
        registry = {
            as_text(k): as_text(v) for k, v in (await redis.hgetall(token_registry(prefix))).items()
        }
        async with redis.pipeline(transaction=False) as pipe:
            for digest in registry.values():
                pipe.hgetall(token_key(prefix, digest))
            records = await pipe.execute()
        found: list[TokenInfo] = []
        gone: list[str] = []
        for token_id, raw in zip(registry, records, strict=True):
            info = _info({as_text(k): as_text(v) for k, v in raw.items()})
            if info is None or (info.expires_at is not None and info.expires_at <= time.time()):
                gone.append(token_id)
            else:
                found.append(info)
        if gone:
            await redis.hdel(token_registry(prefix), *gone)
    return sorted(found, key=lambda t: t.created_at)


async def revoke_token(redis: Redis, prefix: str, token_id: str) -> bool:
    """Revoke a token by its id (as ``token list`` shows it); False if there was none."""
    with redis_errors("revoke the token"):
        digest = await redis.hget(token_registry(prefix), token_id)
        if digest is None:
            return False
        async with redis.pipeline(transaction=False) as pipe:
            pipe.delete(token_key(prefix, as_text(digest)))
            pipe.hdel(token_registry(prefix), token_id)
            await pipe.execute()
    return True
