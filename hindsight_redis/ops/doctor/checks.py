"""The checks ``doctor`` runs on every server, alone or as a node of a cluster.

Each adds facts and problems (with how to fix them) to a ``DoctorReport``.
Nothing secret is reported: whether the server has a password, never the password.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import (
    HindsightError,
    RedisUnavailable,
    redis_errors,
)
from hindsight_redis.settings import ConnectionSettings, is_loopback


@dataclass(slots=True)
class DoctorReport:
    """Facts found and problems (each with how to fix it)."""

    facts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


_LOW_DISK_BYTES = 100 * 2**20
_WRITE_STATUSES = {
    "aof_last_write_status": "the last write to the AOF failed",
    "rdb_last_bgsave_status": "the last RDB snapshot failed",
    "aof_last_bgrewrite_status": "the last AOF rewrite failed",
}


def check_data_dir(path: Path, report: DoctorReport) -> None:
    """The embedded server's data dir: writable (a probe file), and the room left in it."""
    probe = path / f".doctor-write-test-{os.getpid()}"
    try:
        probe.write_text("ok")
        probe.unlink()
    except OSError as e:
        report.problems.append(
            f"data dir {path} is not writable ({e}): Redis cannot persist or restart there; "
            "free space or fix its permissions, or choose another --server-dir"
        )
        return
    free = shutil.disk_usage(path).free
    report.facts["disk"] = f"{free / 2**30:.1f} GiB free in {path}"
    if free < _LOW_DISK_BYTES:
        report.problems.append(
            f"data dir {path} has {free // 2**20} MiB free: once the disk is full Redis "
            "refuses every write (MISCONF); free space or move --server-dir"
        )


async def check_disk_writes(client: aioredis.Redis, report: DoctorReport, log: str) -> None:
    """Redis refuses every write, and even PING (MISCONF), once it cannot write its AOF, or
    while its last RDB snapshot failed and save points are set: a full or read-only disk."""
    info = {as_text(k): as_text(v) for k, v in (await client.info("persistence")).items()}
    failed = [text for name, text in _WRITE_STATUSES.items() if info.get(name, "ok") != "ok"]
    refused = ""
    try:
        with redis_errors("check that the server takes writes"):
            await client.ping()
    except RedisUnavailable as e:
        if "MISCONF" not in str(e.__cause__):
            raise
        refused = str(e.__cause__)
    report.facts["disk_writes"] = "refused" if refused else ("failing" if failed else "ok")
    if refused:
        report.problems.append(
            f"Redis cannot write to its disk and refuses every write ({refused}): the disk "
            "of its data dir is full or read-only; free space or fix it, and Redis takes "
            f"writes again by itself once one succeeds (details in {log})"
        )
    elif failed:
        report.problems.append(
            f"{'; '.join(failed)} (a full or read-only disk? details in {log}): free space "
            "or fix the data dir before Redis refuses writes"
        )


async def check_exposure(
    client: aioredis.Redis, connection: ConnectionSettings, report: DoctorReport
) -> None:
    """A problem when the server takes clients from beyond loopback without a password, or
    when a password is configured that the server does not require."""
    try:
        with redis_errors("read the network configuration"):
            config = await client.config_get("bind")
            config.update(await client.config_get("protected-mode"))
            config.update(await client.config_get("requirepass"))
    except HindsightError:
        return  # a managed server that hides its configuration: nothing to check
    try:
        with redis_errors("read the default user"):
            flags = await client.execute_command("ACL", "GETUSER", "default")  # type: ignore[no-untyped-call]
    except HindsightError:
        flags = None  # no ACL (or not allowed to read it): requirepass says it all
    values = {as_text(k): as_text(v) for k, v in config.items()}
    passwordless = not values.get("requirepass") and _nopass(flags)
    bind = values.get("bind", "")
    protected = values.get("protected-mode", "yes") == "yes"
    report.facts["network"] = (
        f"bind={bind!r} protected-mode={'yes' if protected else 'no'} "
        f"password={'no' if passwordless else 'yes'}"
    )
    if passwordless and protected and not loopback_only(bind):
        report.facts["network"] += " (protected mode refuses clients of other hosts)"
    problem = exposure_problem(bind, protected=protected, passwordless=passwordless)
    if problem is not None:
        report.problems.append(problem)
    if passwordless and connection.redis_password is not None:
        # Redis takes any password when it requires none: the setting protects nothing.
        report.problems.append(
            "HINDSIGHT_REDIS_PASSWORD is set but this Redis requires no password: "
            + (
                "the embedded server was started without it; restart it "
                "(`hindsight-redis server stop`, then `server start`)"
                if connection.redis_url is None
                else "set `requirepass` (or an ACL user) on the server"
            )
        )


def _nopass(acl_user: Any) -> bool:
    """Whether ``ACL GETUSER default`` says the default user is on with no password."""
    if acl_user is None:
        return True
    fields = (
        {as_text(k): v for k, v in acl_user.items()}
        if isinstance(acl_user, dict)
        else {as_text(acl_user[i]): acl_user[i + 1] for i in range(0, len(acl_user) - 1, 2)}
    )
    flags = {as_text(f) for f in fields.get("flags") or ()}
    return "nopass" in flags and "on" in flags


def exposure_problem(bind: str, *, protected: bool, passwordless: bool) -> str | None:
    """What to say about a server bound to ``bind`` (``CONFIG GET bind``); None when it is safe.

    Safe: loopback addresses only, a password, or protected mode (with no
    password, Redis then refuses clients of other hosts). Otherwise anyone
    who reaches the port reads and changes every memory.
    """
    if not passwordless or protected or loopback_only(bind):
        return None
    return (
        f"Redis listens on {bind or '*'} with no password and protected mode off: anyone "
        "who reaches the port reads and changes every memory; set a password "
        "(HINDSIGHT_REDIS_PASSWORD for the embedded server, `requirepass` or an ACL user on "
        "yours) or bind 127.0.0.1"
    )


def loopback_only(bind: str) -> bool:
    """Whether a ``bind`` value (addresses, ``-`` marking optional ones) is loopback only."""
    addresses = [a.lstrip("-") for a in bind.split()]
    return bool(addresses) and all(is_loopback(a) for a in addresses)


async def check_search_gc(client: aioredis.Redis, report: DoctorReport) -> None:
    """RediSearch scores BM25 wrongly for memories updated since its last GC; run it often."""
    try:
        with redis_errors("read the search configuration"):
            reply = await client.execute_command(  # type: ignore[no-untyped-call]
                "FT.CONFIG", "GET", "FORK_GC_RUN_INTERVAL"
            )
        # RESP3: {name: value}; RESP2: [[name, value]]
        value = next(iter(reply.values())) if isinstance(reply, dict) else reply[0][1]
        interval = int(as_text(value))
    except (HindsightError, IndexError, KeyError, StopIteration, TypeError, ValueError):
        return  # a server that does not say: nothing to check
    report.facts["search_gc_interval_s"] = interval
    if interval > 5:
        report.problems.append(
            f"search GC runs every {interval}s: keyword scores are wrong for memories "
            "updated since the last run (each memory is updated once by the contextual "
            "refiner); set search-fork-gc-run-interval 2 and search-fork-gc-clean-threshold 1 "
            "(Redis 8) or FORK_GC_RUN_INTERVAL 2 FORK_GC_CLEAN_THRESHOLD 1 (module arguments)"
        )


async def check_hash_layout(client: aioredis.Redis, report: DoctorReport) -> None:
    """A memory hash stays a compact listpack only while every value fits
    ``hash-max-listpack-value``; a fact with advice (memory, not correctness)."""
    from hindsight_redis.redis.server.launcher import HASH_CONFIG

    name = "hash-max-listpack-value"
    try:
        with redis_errors("read the hash configuration"):
            config = {as_text(k): v for k, v in (await client.config_get(name)).items()}
            value = int(as_text(config.get(name)))
    except (HindsightError, ValueError):
        return  # CONFIG refused (a managed Redis): nothing to check
    wanted = int(HASH_CONFIG[name])
    report.facts[name] = value
    if value < wanted:
        report.facts[name] = (
            f"{value}: memory hashes are hashtables, ~1.3 KB more per memory; "
            f"set {name} {wanted} (docs/decisions.md, 'Listpack hashes')"
        )


async def check_index(client: aioredis.Redis, keys: Keys, report: DoctorReport) -> None:
    """The health of the index of ``keys.namespace``."""
    from hindsight_redis.index.manager import index_health

    try:
        health = await index_health(client, keys)
    except HindsightError as e:
        report.problems.append(f"index: {e}")
        return
    report.facts["index"] = health
    if health.get("exists") is False:
        report.facts["index"] = "not created yet (a worker creates it on start)"
    failures = int(health.get("hash_indexing_failures", 0) or 0)
    if failures:
        report.problems.append(
            f"index: {failures} documents failed to index (wrong vector size?): run "
            "`hindsight-redis reindex`"
        )
