"""The MCP HTTP transport with tokens: real SDK sessions against a real server process."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from hindsight_redis import Settings
from hindsight_redis.cli import main
from hindsight_redis.redis.server import free_port
from hindsight_redis.service.http import BearerAuth
from hindsight_redis.service.tokens import create_token, list_tokens, revoke_token
from hindsight_redis.settings import is_loopback
from tests.integration.helpers import until_answers
from tests.integration.service.test_mcp import _data

SHARED = "Team decision: the billing-service deploy window is Tuesday 14:00 UTC"
PRIVATE = "x's own reminder: the billing-service canary flag is bs_canary_7"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@asynccontextmanager
async def _server(settings: Settings, log: Path, *extra: str) -> AsyncIterator[str]:
    """``mcp --transport http`` as a process (in-process worker on); yields its URL."""
    port = free_port()
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hindsight_redis.cli",
                "mcp",
                "--transport",
                "http",
                "--mcp-port",
                str(port),
                *extra,
            ],
            env={**os.environ, **settings.to_env()},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await until_answers(url)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@asynccontextmanager
async def _session(url: str, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    # The SDK's own client's timeouts (30 s, 300 s to read a held-open stream), with the token.
    timeout = httpx.Timeout(30, read=300)
    async with (
        httpx.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _status(url: str, token: str | None) -> int:
    headers = dict(HEADERS)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as http:
        return (await http.post(url, json=INITIALIZE, headers=headers)).status_code


async def _call(session: ClientSession, tool: str, **args: Any) -> Any:
    result = await session.call_tool(tool, args)
    if result.isError:
        raise AssertionError(result.content[0].text)
    return _data(result)


async def test_tokens_fix_who_calls_and_what_they_see(
    settings: Settings, redis: Redis, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    prefix, a = settings.key_prefix, settings.namespace
    async with _server(settings, log) as url:
        assert await _status(url, None) == 200  # loopback, no token exists yet: open
        x, _ = await create_token(redis, prefix, namespace=a, agent_id="x", scope="write")
        y, y_info = await create_token(redis, prefix, namespace=a, agent_id="y")
        b, _ = await create_token(redis, prefix, namespace="other", agent_id="x")
        reader, _ = await create_token(redis, prefix, namespace=a, agent_id="r", scope="read")
        assert await _status(url, None) == 401  # now that tokens exist, on loopback too
        assert await _status(url, "hrt_000000000000_" + "A" * 43) == 401  # well formed, unknown
        assert await _status(url, "not a token") == 401

        async with _session(url, x) as session:
            shared = await _call(session, "memory_write", content=SHARED, wait=True)
            # A forged agent_id argument is ignored: the token says who writes.
            private = await _call(
                session,
                "memory_write",
                content=PRIVATE,
                visibility="private",
                agent_id="y",
                wait=True,
            )
            assert shared["status"] == private["status"] == "indexed"
            own = await _call(session, "memory_search", query="billing-service canary deploy")
            assert {h["id"] for h in own} == {shared["id"], private["id"]}
            assert {h["agent_id"] for h in own} == {"x"}

        async with _session(url, y) as session:
            hits = await _call(session, "memory_search", query="billing-service canary deploy")
            assert [h["id"] for h in hits] == [shared["id"]]
            by_x = await _call(session, "memory_search", query="canary flag", agent_id="x")
            assert private["id"] not in {h["id"] for h in by_x}
            assert await _call(session, "memory_get", memory_id=private["id"]) is None
            refused = await session.call_tool("memory_forget", {"memory_id": private["id"]})
            assert refused.isError and "NotFound" in refused.content[0].text

        async with _session(url, b) as session:  # same agent name, another namespace
            assert await _call(session, "memory_search", query="billing-service deploy") == []
            assert await _call(session, "memory_get", memory_id=shared["id"]) is None
            # The server's own worker serves every namespace a token can name.
            theirs = await _call(session, "memory_write", content=SHARED, wait=True)
            assert theirs["status"] == "indexed"
            hits = await _call(session, "memory_search", query="billing-service deploy")
            assert [h["id"] for h in hits] == [theirs["id"]]

        async with _session(url, reader) as session:
            assert len(await _call(session, "memory_search", query="deploy window")) == 1
            denied = await session.call_tool("memory_write", {"content": "read tokens can't"})
            assert denied.isError and "PermissionDenied" in denied.content[0].text

        metrics_url = url.replace("/mcp", "/metrics")
        admin, _ = await create_token(redis, prefix, namespace=a, agent_id="ops", scope="admin")
        async with httpx.AsyncClient() as http:
            assert (await http.get(metrics_url)).status_code == 401
            bearer = {"authorization": f"Bearer {x}"}
            assert (await http.get(metrics_url, headers=bearer)).status_code == 403
            bearer = {"authorization": f"Bearer {admin}"}
            scraped = await http.get(metrics_url, headers=bearer)
        assert scraped.status_code == 200
        families = {f.name: f for f in text_string_to_metric_families(scraped.text)}
        indexed = {
            s.labels["namespace"]: s.value
            for s in families["hindsight_indexed"].samples
            if s.name == "hindsight_indexed_total"
        }
        assert indexed == {a: 2.0, "other": 1.0}
        assert await revoke_token(redis, prefix, y_info.token_id)
        assert await _status(url, y) == 401
        assert await _status(url, x) == 200
    text = log.read_text()
    for token in (x, y, b, reader):
        assert token not in text  # tokens never reach a log
    assert "ClosedResourceError" not in text and "Traceback" not in text, text[-2000:]
    # The memory stores only what the token allowed: x as writer, in namespace a.
    assert (await redis.hget(f"{prefix}:{{{a}}}:mem:{private['id']}", "agent_id")) == b"x"


async def test_beyond_loopback_every_request_needs_a_token(
    settings: Settings, redis: Redis, tmp_path: Path
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hindsight_redis.cli",
            "mcp",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--mcp-port",
            str(port),
            "--workers",
            "0",
        ],
        env={**os.environ, **settings.to_env()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(300):
            try:
                status = await _status(url, None)
                break
            except httpx.TransportError:
                await asyncio.sleep(0.05)
        assert status == 401  # no token exists, yet the server is reachable from outside
        token, _ = await create_token(redis, settings.key_prefix, namespace="test", agent_id="z")
        assert await _status(url, token) == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert b"bearer token" in err  # it said why at start


def test_the_token_commands(cli_env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["token", "create", "--agent-id", "planner", "--scope", "read", "--ttl-days", "2"])
        == 0
    )
    out, err = capsys.readouterr()
    token = out.strip()
    assert token.startswith("hrt_") and "shown only now" in err
    assert main(["token", "list"]) == 0
    listed, _ = capsys.readouterr()
    _, token_id, secret = token.split("_", 2)  # the secret may itself hold "_"
    assert token_id in listed and "planner" in listed and "read" in listed
    assert token not in listed and secret not in listed  # never the secret
    # The form: the namespace after the action.
    assert main(["token", "create", "--namespace", "tenant-b", "--agent-id", "zed"]) == 0
    capsys.readouterr()
    assert main(["token", "list", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {(r["namespace"], r["agent_id"]) for r in records} == {
        (cli_env.namespace, "planner"),
        ("tenant-b", "zed"),
    }
    assert main(["token", "revoke", records[1]["token_id"]]) == 0
    assert main(["token", "revoke", token_id]) == 0
    assert main(["token", "revoke", token_id]) == 1
    capsys.readouterr()
    assert main(["token", "list"]) == 0
    assert "no tokens" in capsys.readouterr().out


async def test_expired_tokens_grant_nothing_and_leave_the_list(
    redis: Redis, key_prefix: str
) -> None:
    from hindsight_redis.service.tokens import verify_token

    token, info = await create_token(redis, key_prefix, namespace="n", agent_id="a", ttl_days=1)
    assert await verify_token(redis, key_prefix, token) == info.principal()
    key = f"{key_prefix}:token:" + __import__("hashlib").sha256(token.encode()).hexdigest()
    await redis.hset(key, "expires_at", "1.0")  # as if a day had passed
    assert await verify_token(redis, key_prefix, token) is None
    assert await list_tokens(redis, key_prefix) == []


async def test_checked_tokens_never_reach_a_log_even_at_debug(
    settings: Settings, redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    # The server test above reads a log at the default level; here every logger says all
    # it has (DEBUG) while the bearer check sees a valid, a revoked, an unknown and a
    # malformed token: none of them, nor its secret part, may be in what was logged.
    caplog.set_level(logging.DEBUG)
    prefix = settings.key_prefix
    valid, _ = await create_token(redis, prefix, namespace="a", agent_id="x", scope="admin")
    revoked, info = await create_token(redis, prefix, namespace="a", agent_id="y")
    assert await revoke_token(redis, prefix, info.token_id)
    unknown = valid[:-6] + ("abcdef" if not valid.endswith("abcdef") else "fedcba")
    malformed = "not-a-token-" + valid[-12:]
    reached: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def connection() -> Redis:
        return redis

    app = BearerAuth(inner, connection, prefix, loopback=False)
    statuses = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as h:
        for name, token in [("valid", valid), ("revoked", revoked), ("unknown", unknown)]:
            bearer = {"authorization": f"Bearer {token}"}
            statuses[name] = (await h.get("/mcp", headers=bearer)).status_code
        bearer = {"authorization": f"Bearer {malformed}"}
        statuses["malformed"] = (await h.get("/mcp", headers=bearer)).status_code
    assert statuses == {"valid": 204, "revoked": 401, "unknown": 401, "malformed": 401}
    assert reached == ["/mcp"]
    logged = caplog.text + "".join(repr(r.args) for r in caplog.records)
    for token in (valid, revoked, unknown, malformed):
        secret = token[-16:]  # whatever the id part, the secret part must not show
        assert token not in logged and secret not in logged, (token, logged[-2000:])
