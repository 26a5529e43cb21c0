"""Health checks of a Redis deployment against the settings, for ``hindsight-redis doctor``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis

from hindsight_redis.connection import embedded_server, profile_conflict
from hindsight_redis.errors import SEARCH_MODULE_HINT, HindsightError, redis_errors
from hindsight_redis.keys import Keys
from hindsight_redis.resp import as_text
from hindsight_redis.server.profiles import PersistenceProfile, get_profile, profile_mismatches
from hindsight_redis.settings import Settings


@dataclass(slots=True)
class DoctorReport:
    """Facts found and problems (each with how to fix it)."""

    facts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


async def diagnose(settings: Settings) -> DoctorReport:
    """Check the server version, modules, persistence profile and index health.

    With the embedded server and no explicit profile, the server is checked
    against the profile it was started with; an explicit profile that is not
    the server's is one problem, not a list of config differences.
    """
    report = DoctorReport()
    profile = get_profile(settings.profile)
    check_persistence = True
    if settings.redis_url is None:
        state = embedded_server(settings).state()
        if state is None:
            report.facts["profile"] = f"{profile.name} ({profile.description})"
            report.facts["server"] = f"embedded, not running (data dir {settings.server_dir})"
            report.problems.append(
                "the embedded server is not running: run `hindsight-redis server start`"
            )
            return report
        url = state.url
        report.facts["server"] = f"embedded, {url}, pid {state.pid}, data in {settings.server_dir}"
        conflict = profile_conflict(settings, state.profile)
        if conflict is None:
            profile = get_profile(state.profile)
        else:
            report.problems.append(conflict)
            check_persistence = False
    else:
        url = settings.redis_url
        report.facts["server"] = "external (HINDSIGHT_REDIS_URL)"
    report.facts["profile"] = f"{profile.name} ({profile.description})"
    client = aioredis.Redis.from_url(url, socket_timeout=5)
    try:
        with redis_errors("check the server"):
            await _check_server(client, settings, profile, report, check_persistence)
    except HindsightError as e:
        report.problems.append(str(e))
    finally:
        await client.aclose()
    return report


async def _check_server(
    client: aioredis.Redis,
    settings: Settings,
    profile: PersistenceProfile,
    report: DoctorReport,
    check_persistence: bool,
) -> None:
    info = await client.info("server")
    version = str(info.get("redis_version", "?"))
    report.facts["redis_version"] = version
    modules = {as_text(m[b"name"]): int(m[b"ver"]) for m in await client.module_list()}
    report.facts["modules"] = (
        ", ".join(f"{name} {ver}" for name, ver in sorted(modules.items())) or "none"
    )
    has_search = "search" in modules or "searchlight" in modules
    if not has_search:
        try:
            with redis_errors("list indexes"):
                await client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]
            has_search = True  # Redis 8 builds the query engine in
        except HindsightError:
            pass
    if not has_search:
        report.problems.append(
            "this Redis has no search module (RediSearch / Redis Query Engine), so memories "
            f"cannot be indexed or searched: {SEARCH_MODULE_HINT}"
        )
    if int(version.split(".")[0]) < 7:
        report.problems.append(
            f"Redis {version} is too old: 7.2 or newer is needed (8 recommended)"
        )
    config = await client.config_get("appendonly")
    config.update(await client.config_get("appendfsync"))
    config.update(await client.config_get("save"))
    actual = {as_text(k): as_text(v) for k, v in config.items()}
    report.facts["persistence"] = (
        f"appendonly={actual.get('appendonly')} appendfsync={actual.get('appendfsync')} "
        f"save={actual.get('save')!r}"
    )
    for problem in profile_mismatches(profile, actual) if check_persistence else ():
        report.problems.append(
            f"persistence: {problem} (restart the embedded server with --profile "
            f"{profile.name}, or CONFIG SET it on your server)"
        )
    if has_search:
        await _check_search_gc(client, report)
        await _check_index(client, settings, report)


async def _check_search_gc(client: aioredis.Redis, report: DoctorReport) -> None:
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


async def _check_index(client: aioredis.Redis, settings: Settings, report: DoctorReport) -> None:
    from hindsight_redis.index import MemoryIndex

    keys = Keys(settings.key_prefix, settings.namespace)
    try:
        health = await MemoryIndex(client, keys, settings).health()
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
