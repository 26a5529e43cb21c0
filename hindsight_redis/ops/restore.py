"""``restore DIR``: a backup (``ops.backup``) into a fresh data directory, served and checked.

The snapshot is checked against its manifest (format, SHA-256), copied into
the embedded server's data directory, which must be empty (``force`` moves
what is there aside, into ``before-restore-<time>/``), and the server started
there. Redis loads an RDB only when it has no AOF to load; under a profile
with AOF (which then finds none), it first starts without AOF, turns it on (an
AOF rewrite writes the data into it) and restarts with the profile. Then the
search indexes finish re-scanning the memories, and each namespace (memories,
stream, consumer groups and their pending entries) is compared with the
manifest: workers started on the restored server resume where the backup
left the streams, and reclaim what was pending.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import redis.asyncio as aioredis

from hindsight_redis.core.resp import as_text, reply_map
from hindsight_redis.errors import BackupError, HindsightError, redis_errors
from hindsight_redis.ops.backup import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    file_sha256,
    namespace_states,
)
from hindsight_redis.redis.connection import local_cluster, plain_password
from hindsight_redis.redis.server import EmbeddedServer, ServerState, get_profile
from hindsight_redis.settings import Settings

_POLL_S = 0.05
_T = TypeVar("_T")


@dataclass(slots=True)
class RestoreReport:
    """The restored server, what it holds, and how that differs from the manifest."""

    data_dir: Path
    state: ServerState
    manifest: dict[str, Any]
    namespaces: dict[str, dict[str, Any]]
    missing_indexes: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    moved_aside: Path | None = None

    @property
    def ok(self) -> bool:
        """True when every index is back and the namespaces are as recorded."""
        return not self.missing_indexes and not self.differences


def read_manifest(backup_dir: Path) -> dict[str, Any]:
    """The manifest of a backup directory, its snapshot checked; ``BackupError`` otherwise."""
    try:
        manifest: dict[str, Any] = json.loads((backup_dir / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        raise BackupError(
            f"{backup_dir} is not a backup of hindsight-redis ({MANIFEST}: {e}); "
            "`hindsight-redis backup --out DIR` writes one"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{backup_dir / MANIFEST} is not the manifest of a backup")
    if int(manifest.get("format_version", 0)) > FORMAT_VERSION:
        raise BackupError(
            f"{backup_dir} was written by a newer hindsight-redis "
            f"({manifest.get('package_version')}): upgrade to restore it"
        )
    snapshot = manifest["snapshot"]
    path = backup_dir / snapshot["file"]
    if not path.is_file() or file_sha256(path) != snapshot["sha256"]:
        raise BackupError(f"{path} is missing or damaged (its SHA-256 is not the manifest's)")
    return manifest


async def restore(
    settings: Settings, backup_dir: Path, *, force: bool = False, timeout_s: float = 600.0
) -> RestoreReport:
    """Restore ``backup_dir`` into the embedded server's data dir of ``settings`` and start
    the server there (with the configured profile if explicit, else the backup's)."""
    manifest = read_manifest(backup_dir)
    connection, server = settings.connection, settings.server
    if connection.redis_url is not None:
        raise BackupError(
            "restore starts the embedded server in --server-dir: unset HINDSIGHT_REDIS_URL "
            f"(for your own Redis: stop it, copy {manifest['snapshot']['file']} into its "
            "dir, remove its appendonlydir, start it with appendonly no)"
        )
    explicit = "profile" in connection.model_fields_set
    profile = get_profile(
        connection.profile if explicit else manifest.get("profile") or connection.profile
    )

    def server_with(**extra: str) -> EmbeddedServer:
        return EmbeddedServer(
            server.server_dir,
            profile,
            port=server.server_port,
            bind=server.server_bind,
            start_timeout_s=server.server_start_timeout_s,
            password=connection.redis_password,
            extra_config=extra,
        )

    target = server_with()
    if target.state() is not None or local_cluster(connection, server).state() is not None:
        raise BackupError(
            f"a server runs in {target.data_dir}: restore into a fresh data dir "
            "(--server-dir), or stop that one first (`hindsight-redis server stop`)"
        )
    moved = _make_room(target.data_dir, force)
    shutil.copyfile(backup_dir / manifest["snapshot"]["file"], target.data_dir / "dump.rdb")
    aof = profile.config.get("appendonly") == "yes"
    if aof:  # load the RDB without AOF, write the AOF from it, then run as the profile says
        loader = server_with(appendonly="no")
        state = await asyncio.to_thread(loader.start)
        await _with_client(settings, state, lambda c: _turn_aof_on(c, timeout_s))
        await asyncio.to_thread(loader.stop)
    state = await asyncio.to_thread(target.start)

    async def check(client: aioredis.Redis) -> RestoreReport:
        return await _check(client, settings, target, state, manifest, timeout_s)

    report = await _with_client(settings, state, check)
    report.moved_aside = moved
    return report


def _make_room(data_dir: Path, force: bool) -> Path | None:
    """Create ``data_dir``, or with ``force`` move what it holds aside (where to)."""
    data_dir = data_dir.expanduser()
    present = [p for p in data_dir.iterdir() if p.name != ".lock"] if data_dir.is_dir() else []
    if not present:
        data_dir.mkdir(parents=True, exist_ok=True)
        return None
    if not force:
        raise BackupError(
            f"{data_dir} is not empty: restore into a fresh data dir (--server-dir), or add "
            "--force to move what is there aside (into before-restore-<time>/ inside it)"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = data_dir / f"before-restore-{stamp}"
    aside.mkdir()
    for path in present:
        if not path.name.startswith("before-restore-"):
            path.rename(aside / path.name)
    return aside


async def _with_client(
    settings: Settings, state: ServerState, action: Callable[[aioredis.Redis], Awaitable[_T]]
) -> _T:
    password = plain_password(settings.connection.redis_password)
    client = aioredis.Redis.from_url(state.url, socket_timeout=30, password=password)
    try:
        with redis_errors("check the restored server"):
            return await action(client)
    finally:
        await client.aclose()


async def _turn_aof_on(client: aioredis.Redis, timeout_s: float) -> None:
    """``appendonly yes``, and wait until the rewrite put the data into the AOF."""
    await client.config_set("appendonly", "yes")
    deadline = time.monotonic() + timeout_s
    while True:
        info = {as_text(k): as_text(v) for k, v in (await client.info("persistence")).items()}
        written = info.get("aof_enabled") == "1" and info.get("aof_rewrite_in_progress") == "0"
        if written and info.get("aof_rewrite_scheduled") == "0":
            if info.get("aof_last_bgrewrite_status") != "ok":
                raise BackupError("Redis could not write its AOF from the snapshot: see its log")
            return
        if time.monotonic() > deadline:
            raise BackupError("the AOF of the restored data was not written in time")
        await asyncio.sleep(_POLL_S)


async def _check(
    client: aioredis.Redis,
    settings: Settings,
    target: EmbeddedServer,
    state: ServerState,
    manifest: dict[str, Any],
    timeout_s: float,
) -> RestoreReport:
    """Wait for the indexes' scans, then compare the namespaces with the manifest."""
    try:
        with redis_errors("list the indexes"):
            names = {as_text(n) for n in await client.execute_command("FT._LIST")}  # type: ignore[no-untyped-call]
    except HindsightError:
        names = set()
    deadline = time.monotonic() + timeout_s
    for name in sorted(names):
        while True:
            info = reply_map(await client.execute_command("FT.INFO", name))  # type: ignore[no-untyped-call]
            if float(as_text(info.get("percent_indexed", 1))) >= 1.0:
                break
            if time.monotonic() > deadline:
                raise BackupError(f"index {name} is still re-scanning after {timeout_s}s")
            await asyncio.sleep(_POLL_S)
    prefix = manifest.get("key_prefix") or settings.key_prefix
    recorded: dict[str, dict[str, Any]] = manifest.get("namespaces", {})
    states = await namespace_states(client, prefix, [settings.namespace, *recorded])
    differences = []
    if manifest.get("quiescent"):  # else writes went on while it was taken: may hold more
        for namespace, then in recorded.items():
            now = states.get(namespace)
            if now != then:
                differences.append(f"namespace {namespace}: backed up {then}, restored {now}")
    return RestoreReport(
        data_dir=target.data_dir,
        state=state,
        manifest=manifest,
        namespaces=states,
        missing_indexes=sorted(set(manifest.get("indexes", [])) - names),
        differences=differences,
    )
