"""``backup``: a consistent copy of the whole Redis, with what is needed to check a restore.

The snapshot is an RDB written by ``BGSAVE`` (a fork: one point in time, Redis
keeps serving), whatever the profile: copying a live multi-part AOF could catch
its files between a rewrite's steps. The RDB holds everything: memories,
streams, consumer groups with their pending entries, and the search indexes'
definitions (RediSearch re-scans the hashes when it loads them). Beside it go
``indexes.json`` (each index's ``FT.INFO``: its definition, for the record),
the embedded server's ``server.json`` and ``profile``, and ``manifest.json``:
the package and Redis versions, the time, the snapshot's size and SHA-256, and
per namespace its memory count, stream and consumer groups (``restore``
compares them).

The files are copied from the server's data directory, so the backup runs on
the machine of the embedded server, or of an external Redis whose ``dir`` it
can read; a cluster is backed up node by node with Redis's own tools.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys, namespace_registry
from hindsight_redis.core.resp import as_text, reply_map
from hindsight_redis.core.version import package_version
from hindsight_redis.errors import BackupError, HindsightError, RedisCommandError, redis_errors
from hindsight_redis.index.upgrade import read_format
from hindsight_redis.redis.cluster import is_cluster_url
from hindsight_redis.redis.connection import embedded_server, local_cluster, plain_password
from hindsight_redis.settings import Settings, redact_url

FORMAT = "hindsight-redis-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SNAPSHOT = "dump.rdb"
INDEXES = "indexes.json"
SERVER_FILES = ("server.json", "profile")  # the embedded server's, when there is one
_POLL_S = 0.05


@dataclass(slots=True)
class BackupReport:
    """What ``backup`` wrote: the directory and its manifest."""

    out: Path
    manifest: dict[str, Any] = field(default_factory=dict)


async def backup(settings: Settings, out: Path, *, timeout_s: float = 600.0) -> BackupReport:
    """Snapshot the Redis of ``settings`` into the new (or empty) directory ``out``.

    ``BackupError`` when the server's files cannot be reached from here, when
    ``out`` holds anything, or when the snapshot fails.
    """
    url, data_dir, profile = _source(settings)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BackupError(f"{out} is not an empty directory: back up into a new one")
    client = aioredis.Redis.from_url(
        url, socket_timeout=30, password=plain_password(settings.connection.redis_password)
    )
    try:
        with redis_errors("back up", hint="start the server, or check HINDSIGHT_REDIS_URL"):
            return await _backup(client, settings, out, url, data_dir, profile, timeout_s)
    finally:
        await client.aclose()


def _source(settings: Settings) -> tuple[str, Path | None, str | None]:
    """The URL to snapshot, the embedded server's data dir (None for an external Redis:
    its ``dir`` is asked), its profile."""
    connection, server = settings.connection, settings.server
    url = connection.redis_url
    if url is not None:
        if connection.cluster or is_cluster_url(url):
            raise BackupError(_CLUSTER)
        return url, None, connection.profile
    if local_cluster(connection, server).state() is not None:
        raise BackupError(_CLUSTER)
    embedded = embedded_server(connection, server)
    state = embedded.state()
    if state is None:
        raise BackupError(
            f"the embedded server of {server.server_dir} is not running: start it "
            "(`hindsight-redis server start`), then back it up"
        )
    return state.url, embedded.data_dir, state.profile


_CLUSTER = (
    "backup copies one server's files; a Redis Cluster is backed up node by node "
    "(BGSAVE on each master, then copy its dump.rdb and nodes.conf)"
)


async def _backup(
    client: aioredis.Redis,
    settings: Settings,
    out: Path,
    url: str,
    data_dir: Path | None,
    profile: str | None,
    timeout_s: float,
) -> BackupReport:
    config = await client.config_get("dir")
    config.update(await client.config_get("dbfilename"))
    values = {as_text(k): as_text(v) for k, v in config.items()}
    source = Path(values["dir"]) / values["dbfilename"]
    if data_dir is None and not source.parent.is_dir():
        raise BackupError(
            f"this Redis keeps its data in {source.parent}, which is not on this machine: "
            "run `hindsight-redis backup` where Redis runs, or use your provider's snapshots"
        )
    indexes = await _indexes(client)
    namespaces = await namespace_states(client, settings.key_prefix, [settings.namespace])
    keys = int(await client.dbsize())
    started = time.time()
    await _snapshot(client, timeout_s)
    after = await namespace_states(client, settings.key_prefix, [settings.namespace])
    try:
        if source.stat().st_mtime < started - 1:
            raise BackupError(
                f"{source} is older than the snapshot just taken: is this Redis on another "
                "machine? run `hindsight-redis backup` where it runs"
            )
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, out / SNAPSHOT)  # Redis renames a new snapshot in: whole
        for name in SERVER_FILES:
            if data_dir is not None and (data_dir / name).is_file():
                shutil.copyfile(data_dir / name, out / name)
    except OSError as e:
        raise BackupError(f"cannot copy the snapshot {source} to {out}: {e}") from e
    info = {as_text(k): v for k, v in (await client.info("server")).items()}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "package_version": package_version(),
        "created_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "redis_version": as_text(info.get("redis_version", "?")),
        "source": {"url": redact_url(url), "data_dir": str(source.parent)},
        "profile": profile,
        "snapshot": {
            "file": SNAPSHOT,
            "bytes": (out / SNAPSHOT).stat().st_size,
            "sha256": file_sha256(out / SNAPSHOT),
        },
        "keys": keys,
        "key_prefix": settings.key_prefix,
        # Unchanged across the snapshot: the counts are the snapshot's exactly (else
        # writes went on meanwhile, and the snapshot may hold a few more).
        "quiescent": after == namespaces,
        "namespaces": namespaces,
        "indexes": sorted(indexes),
    }
    (out / INDEXES).write_text(json.dumps(indexes, indent=2, sort_keys=True))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return BackupReport(out=out, manifest=manifest)


async def _snapshot(client: aioredis.Redis, timeout_s: float) -> None:
    """A ``BGSAVE`` started after this call, done; ``BackupError`` if it failed."""
    deadline = time.monotonic() + timeout_s
    while True:
        before = await _persistence(client)
        try:
            with redis_errors("start a snapshot"):
                # SCHEDULE: an AOF rewrite running, the save starts after it.
                await client.execute_command("BGSAVE", "SCHEDULE")  # type: ignore[no-untyped-call]
            break
        except RedisCommandError as e:
            if "already in progress" not in e.reply:
                raise
            await _wait(lambda p: p["rdb_bgsave_in_progress"] == "0", client, deadline)
    done = await _wait(
        lambda p: (
            int(p["rdb_saves"]) > int(before["rdb_saves"]) and p["rdb_bgsave_in_progress"] == "0"
        ),
        client,
        deadline,
    )
    if done["rdb_last_bgsave_status"] != "ok":
        raise BackupError(
            "Redis could not write its snapshot (rdb_last_bgsave_status "
            f"{done['rdb_last_bgsave_status']}): see its log; is its disk full?"
        )


async def _persistence(client: aioredis.Redis) -> dict[str, str]:
    return {as_text(k): as_text(v) for k, v in (await client.info("persistence")).items()}


async def _wait(test: Any, client: aioredis.Redis, deadline: float) -> dict[str, str]:
    while not test(found := await _persistence(client)):
        if time.monotonic() > deadline:
            raise BackupError("the snapshot did not finish in time: see the Redis log")
        await asyncio.sleep(_POLL_S)
    return found


async def _indexes(client: aioredis.Redis) -> dict[str, Any]:
    """Every search index's ``FT.INFO`` (its definition and attributes), as JSON."""
    found = {}
    try:
        with redis_errors("list the indexes"):
            names = await client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]
    except HindsightError:
        return {}  # no search module: nothing to record
    for name in sorted(as_text(n) for n in names):
        with redis_errors("read an index"):
            info = reply_map(await client.execute_command("FT.INFO", name))  # type: ignore[no-untyped-call]
        found[name] = {
            k: jsonable(v)
            for k, v in info.items()
            if k in ("index_name", "index_options", "index_definition", "attributes")
        }
    return found


async def namespace_states(
    client: aioredis.Redis, prefix: str, also: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """Per namespace of ``prefix`` (the registry's, and ``also``): indexed memories, its
    data format, the stream's entries and last id, each consumer group's last delivered id
    and pending count. What a restore must give back."""
    with redis_errors("read the namespaces"):
        registered = {as_text(m) for m in await client.smembers(namespace_registry(prefix))}
    states = {}
    for namespace in sorted(registered | set(also)):
        keys = Keys(prefix, namespace)
        state: dict[str, Any] = {
            "memories": await _memories(client, keys),
            "data_format": (await read_format(client, keys)).version,
        }
        try:
            with redis_errors("read the stream"):
                stream = reply_map(await client.xinfo_stream(keys.stream))
                groups = await client.xinfo_groups(keys.stream)
        except RedisCommandError:  # no stream (nothing written yet)
            stream, groups = {}, []
        state["stream_length"] = int(stream.get("length", 0))
        state["stream_added"] = int(stream.get("entries-added", 0))
        state["stream_last_id"] = as_text(stream.get("last-generated-id", "0-0"))
        state["groups"] = {
            as_text(g["name"]): {
                "last_delivered": as_text(g["last-delivered-id"]),
                "pending": int(g["pending"]),
            }
            for g in map(reply_map, groups)
        }
        states[namespace] = state
    return states


async def _memories(client: aioredis.Redis, keys: Keys) -> int | None:
    """The documents of the namespace's index; None when it has none."""
    try:
        with redis_errors("read the index"):
            info = reply_map(await client.execute_command("FT.INFO", keys.index_alias))  # type: ignore[no-untyped-call]
    except HindsightError:
        return None
    return int(float(as_text(info.get("num_docs", 0))))


def jsonable(value: Any) -> Any:
    """A Redis reply as JSON values (bytes as text)."""
    if isinstance(value, bytes | str):
        return as_text(value)
    if isinstance(value, dict):
        return {as_text(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
