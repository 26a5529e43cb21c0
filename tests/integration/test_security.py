"""Security: namespaces and private memories stay apart under injected syntax, secrets stay
secret, the embedded Redis binds loopback and can require a password.

Real servers: the session's, and an embedded one of this module started with a
password (``redis_password``), which every connection of the project must send.
"""

from __future__ import annotations

import json
import logging
import secrets
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis as redis_sync
from pydantic import SecretStr
from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.cli import main
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import InvalidArgument, NotFound, RedisAccessDenied
from hindsight_redis.ops.doctor import diagnose
from hindsight_redis.ops.metrics import metrics_app
from hindsight_redis.redis.connection import embedded_server
from hindsight_redis.service.http import BearerAuth
from hindsight_redis.service.mcp import PRINCIPAL_STATE
from hindsight_redis.service.tokens import create_token
from tests.integration.helpers import Drain, bare_redis

FACT = "The billing-service deploy window is Tuesday 14:00 UTC, ERR_CONN_RESET on failure"
DISTINCT = [
    "alice prefers answers about the billing dashboard in Chinese",
    "The on-call rotation for payments changes every Monday at 09:00",
    "Postgres replica lag alerts fire above 30 seconds on db-7",
]
INJECTIONS = [
    "*",
    "-",
    "|",
    "@namespace:{other}",
    "billing | @namespace:{b}",
    "*)|(*",
    "{",
    "}",
    "-@visibility:{private}",
    "@agent_id:{x} | *",
    '"billing" | *',
    "\\",
    "%%billing%%",
    "billing=>{$weight: 100}",
    "@namespace:{a} | @namespace:{b}",
    "ｂｉｌｌｉｎｇ",
    "bіlling",
    "*=>[KNN 100 @vec_g1 $BLOB]",
    "billing) | (@status:{archived}",
    "$BLOB",
    "deploy* | *",
]
FILTER_INJECTIONS: list[dict[str, Any]] = [
    {"agent_id": "x} | @namespace:{b"},
    {"agent_id": "*"},
    {"session_id": "s} | (*"},
    {"task_type": "a|b"},
    {"tags": ["ops} | @namespace:{b"]},
    {"tags": ["*"]},
    {"as_agent": "x} | @visibility:{private"},
    {"as_agent": "*"},
    {"as_agent": "x\\"},
    {"include_archived": True, "agent_id": "x"},
    {"since": 0, "until": 4e9, "as_agent": "y"},
]


# -- isolation ---------------------------------------------------------------------


async def _two_namespaces(
    settings: Settings, drain: Drain
) -> tuple[dict[str, dict[str, set[str]]], Settings]:
    """Namespaces a and b, each with x's shared and private and y's shared memories."""
    ids: dict[str, dict[str, set[str]]] = {}
    for name in ("a", "b"):
        on = settings.model_copy(update={"namespace": name})
        async with AsyncMemoryClient(on) as client:
            shared = await client.write_many(
                [
                    {"content": f"{text} ({name})", "tags": ["ops"], "session_id": "s"}
                    for text in DISTINCT
                ],
                as_agent="x",
            )
            private = await client.write(
                f"x's own note in {name}: the billing canary flag",
                visibility="private",
                as_agent="x",
                tags=["ops"],
            )
            theirs = await client.write(f"{FACT} by y in {name}", as_agent="y")
        await drain(on)
        ids[name] = {
            "shared": {r.id for r in shared} | {theirs.id},
            "private": {private.id},
        }
    return ids, settings


async def test_hostile_searches_across_two_namespaces_see_only_their_own(
    settings: Settings, drain: Drain
) -> None:
    ids, _ = await _two_namespaces(settings, drain)
    for name, other in (("a", "b"), ("b", "a")):
        async with AsyncMemoryClient(settings.model_copy(update={"namespace": name})) as client:
            theirs = ids[other]["shared"] | ids[other]["private"]
            found = 0
            for query in [*INJECTIONS, FACT]:
                for extra in [{}, *FILTER_INJECTIONS]:
                    for mode in ("hybrid", "keyword", "vector"):
                        try:
                            hits = await client.search(query, mode=mode, top_k=20, **extra)
                        except InvalidArgument as e:  # bad input, in words: never Redis's
                            assert "Syntax error" not in str(e), e
                            continue
                        got = {h.id for h in hits}
                        found += len(got)
                        assert not got & theirs, (name, query, extra, mode)
                        viewer = extra.get("as_agent", "")
                        if viewer != "x":
                            assert not got & ids[name]["private"], (name, query, extra, mode)
                        assert got <= ids[name]["shared"] | ids[name]["private"]
            assert found > 100  # the pool was searched, not just refused


async def test_ids_of_another_namespace_read_as_absent(settings: Settings, drain: Drain) -> None:
    ids, _ = await _two_namespaces(settings, drain)
    a, b = (settings.model_copy(update={"namespace": n}) for n in ("a", "b"))
    async with AsyncMemoryClient(a) as in_a, AsyncMemoryClient(b) as in_b:
        for memory_id in ids["a"]["shared"] | ids["a"]["private"]:
            assert await in_b.get(memory_id) is None
            assert await in_b.get(memory_id, as_agent="x") is None
            for action in ("forget", "restore", "protect"):
                with pytest.raises(NotFound):
                    await getattr(in_b, action)(memory_id)
            # Ids that would name another key, or a pattern, are refused outright.
            for forged in (
                f"x}}:mem:{memory_id}",
                f"{{a}}:mem:{memory_id}",
                f"{memory_id}*",
                f"{memory_id}:x",
                "*",
            ):
                with pytest.raises(InvalidArgument, match="invalid memory id"):
                    await in_b.get(forged)
                with pytest.raises(InvalidArgument, match="invalid memory id"):
                    await in_b.forget(forged, force=True)
        (private,) = ids["a"]["private"]
        assert await in_a.get(private, as_agent="y") is None
        assert await in_a.get(private, as_agent="x} | @visibility:{private") is None
        with pytest.raises(NotFound):
            await in_a.forget(private, as_agent="y", force=True)
        for memory_id in ids["a"]["shared"] | ids["a"]["private"]:  # nothing was touched
            record = await in_a.get(memory_id)
            assert record is not None and record.status == "active" and not record.protected


# -- the embedded server: loopback, password ---------------------------------------


async def test_the_embedded_server_binds_loopback_in_protected_mode(redis: Redis) -> None:
    assert Settings.model_fields["server_bind"].default == "127.0.0.1"
    config = await redis.config_get("bind")
    config.update(await redis.config_get("protected-mode"))
    assert {as_text(k): as_text(v) for k, v in config.items()} == {
        "bind": "127.0.0.1",
        "protected-mode": "yes",
    }


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """An embedded server started with a password; settings that use it (their own prefix)."""
    password = "pw-" + secrets.token_urlsafe(24)
    settings = Settings(
        server_dir=tmp_path_factory.mktemp("locked"),
        server_port=0,
        redis_password=password,
        profile="ephemeral",
        embedder="hash",
        contextual_embedder="none",
        namespace="sec",
        worker_block_ms=50,
    )
    server = embedded_server(settings.connection, settings.server)
    server.start()
    try:
        yield settings
    finally:
        assert server.stop()


def _own(settings: Settings, **update: Any) -> Settings:
    """``settings`` with a prefix of its own (``model_copy`` does not validate: pass SecretStr)."""
    return settings.model_copy(update={"key_prefix": f"s{uuid.uuid4().hex[:8]}", **update})


async def test_with_a_password_every_connection_sends_it(locked: Settings) -> None:
    settings = _own(locked)
    password = settings.redis_password
    assert password is not None
    state = embedded_server(settings.connection, settings.server).state()
    assert state is not None and state.host == "127.0.0.1"
    # The server wants it: a connection without it, or with another, is refused.
    with pytest.raises(redis_sync.AuthenticationError):
        redis_sync.Redis.from_url(state.url).ping()
    with pytest.raises(RedisAccessDenied, match="HINDSIGHT_REDIS_PASSWORD"):
        await AsyncMemoryClient(_own(locked, redis_password=SecretStr("wrong"))).connect()
    # Nobody reads it off the process list or the server's log.
    args = subprocess.run(
        ["ps", "-o", "args=", "-p", str(state.pid)], capture_output=True, text=True, check=True
    ).stdout
    assert password.get_secret_value() not in args
    log = (settings.server_dir / "redis.log").read_text()
    assert password.get_secret_value() not in log
    # Clients, workers, metrics and token commands connect with it.
    async with AsyncMemoryClient(settings) as client:
        receipt = await client.write(FACT)
        report = await Worker(settings).run_async(burst=True)
        assert report.indexed == 1
        assert [h.id for h in await client.search("ERR_CONN_RESET")] == [receipt.id]
        token, _ = await create_token(
            client.redis, settings.key_prefix, namespace="sec", agent_id="ops"
        )
    metrics = metrics_app(settings)
    try:
        body, _ = await metrics.render()
    finally:
        await metrics.aclose()
    assert (
        b"hindsight_redis_up 1.0" in body
        and b'hindsight_indexed_total{namespace="sec"} 1.0' in body
    )
    # So does a URL that carries the password itself (and repr hides it).
    url = f"redis://:{password.get_secret_value()}@127.0.0.1:{state.port}/0"
    in_url = _own(locked, redis_url=url, redis_password=None, key_prefix=settings.key_prefix)
    assert password.get_secret_value() not in repr(in_url)
    async with AsyncMemoryClient(in_url) as client:
        assert (await client.get(receipt.id)) is not None
    assert token not in body.decode()


def test_cli_commands_use_the_password(
    locked: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _own(locked)
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    assert main(["token", "create", "--agent-id", "planner"]) == 0
    token = capsys.readouterr().out.strip()
    assert main(["token", "list"]) == 0 and "planner" in capsys.readouterr().out
    assert main(["write", FACT]) == 0
    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accepted"] == 1
    main(["doctor"])
    out, err = capsys.readouterr()
    assert "password=yes" in out and "protected mode" not in out
    secret = settings.redis_password.get_secret_value() if settings.redis_password else ""
    assert secret and secret not in out + err and token not in out + err


# -- secrets -------------------------------------------------------------------------


async def test_secrets_never_reach_logs_stats_or_doctor(
    locked: Settings, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    llm_key, embedding_key = "sk-llm-" + secrets.token_hex(8), "sk-emb-" + secrets.token_hex(8)
    settings = _own(
        locked, llm_api_key=SecretStr(llm_key), embedding_api_key=SecretStr(embedding_key)
    )
    assert settings.redis_password is not None
    async with AsyncMemoryClient(settings) as client:
        token, _ = await create_token(
            client.redis, settings.key_prefix, namespace="sec", agent_id="ops"
        )
        await client.write(FACT, as_agent="ops")
        await Worker(settings).run_async(burst=True)
        await client.search("billing deploy")
        stats = await client.stats()
    report = await diagnose(settings)
    secret_values = [llm_key, embedding_key, settings.redis_password.get_secret_value(), token]
    out, err = capsys.readouterr()
    seen = "\n".join(
        [
            caplog.text,
            out,
            err,
            repr(settings),
            str(settings),
            json.dumps(stats),
            repr(report),
            json.dumps(report.facts, default=str),
        ]
    )
    assert caplog.records  # DEBUG logging was on and said things
    for value in secret_values:
        assert value not in seen
    assert "password=yes" in report.facts["network"]


def test_settings_show_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_REDIS_PASSWORD", "hunter2-env")
    monkeypatch.setenv("HINDSIGHT_LLM_API_KEY", "sk-hunter3")
    settings = Settings(redis_url="redis://admin:hunter4@cache.internal:6380/2")
    shown = repr(settings) + str(settings)
    for secret in ("hunter2-env", "sk-hunter3", "hunter4"):
        assert secret not in shown, secret
    assert "redis://***@cache.internal:6380/2" in repr(settings)
    assert settings.redis_password is not None
    assert settings.redis_password.get_secret_value() == "hunter2-env"
    assert settings.to_env()["HINDSIGHT_REDIS_PASSWORD"] == "hunter2-env"  # for child processes
    monkeypatch.setenv("HINDSIGHT_REDIS_PASSWORD", "")
    assert Settings().redis_password is None  # set but empty: no password


async def test_doctor_on_a_server_beyond_loopback(tmp_path: Path) -> None:
    # Protected mode on, no password: Redis refuses other hosts, doctor says so (no problem).
    with bare_redis(tmp_path, "--bind", "0.0.0.0", "--protected-mode", "yes") as url:
        report = await diagnose(Settings(redis_url=url, embedder="hash"))
        assert "protected mode refuses clients of other hosts" in report.facts["network"]
        assert not [p for p in report.problems if "protected mode off" in p]
        # A password this server does not ask for protects nothing: doctor says so.
        report = await diagnose(Settings(redis_url=url, embedder="hash", redis_password="pw-x"))
        assert [p for p in report.problems if "requires no password" in p], report.problems
        # With a password, protected mode may go: still no problem, and the password unsaid.
        password = secrets.token_urlsafe(24)
        raw = redis_sync.Redis.from_url(url)
        raw.config_set("requirepass", password)
        raw.close()
        raw = redis_sync.Redis.from_url(url, password=password)
        raw.config_set("protected-mode", "no")
        raw.close()
        report = await diagnose(Settings(redis_url=url, embedder="hash", redis_password=password))
    assert "password=yes" in report.facts["network"], report
    assert not [p for p in report.problems if "no password" in p]
    assert password not in repr(report)


# -- the HTTP transport's door ----------------------------------------------------------


@pytest.mark.parametrize("loopback", [True, False])
async def test_http_auth_refuses_every_hostile_header(
    settings: Settings, redis: Redis, loopback: bool
) -> None:
    reached: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope.get("state", {}).get(PRINCIPAL_STATE))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def connection() -> Redis:
        return redis

    door = BearerAuth(app, connection, settings.key_prefix, loopback=loopback)
    transport = httpx.ASGITransport(app=door)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        if loopback:  # on loopback, open until a token exists
            assert (await http.get("/mcp")).status_code == 200
            reached.clear()
        token, _ = await create_token(redis, settings.key_prefix, namespace="test", agent_id="z")
        hostile = [
            None,
            "",
            "Bearer",
            "Bearer ",
            "Basic " + token,
            "Bearer " + token + "x",
            "Bearer " + token.upper(),
            "Bearer " + token[:-1],
            "Bearer " + "A" * 100_000,
            "Bearer hrt_000000000000_" + "A" * 43,
            "Bearer *",
            "Bearer " + token + " x",
            "Bearer " + token.replace("_", "}", 1),
        ]
        for header in hostile:
            headers = {} if header is None else {"authorization": header}
            response = await http.get("/mcp", headers=headers)
            assert response.status_code == 401, (header and header[:40], response.text)
        for raw in (b"Bearer \xff\xfe", b"Bearer \x00" + token.encode()):
            response = await http.get("/mcp", headers=[(b"authorization", raw)])
            assert response.status_code == 401
        assert reached == []  # no hostile request got past the door
        ok = await http.get("/mcp", headers={"authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and reached[0].agent_id == "z"
