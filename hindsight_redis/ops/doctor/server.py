"""``doctor`` on one Redis server: the embedded one or the one ``redis_url`` names."""

from __future__ import annotations

import redis.asyncio as aioredis

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import (
    SEARCH_MODULE_HINT,
    HindsightError,
    redis_errors,
)
from hindsight_redis.ops.doctor.checks import (
    DoctorReport,
    check_data_dir,
    check_disk_writes,
    check_exposure,
    check_hash_layout,
    check_index,
    check_search_gc,
)
from hindsight_redis.ops.doctor.data_format import check_data_format
from hindsight_redis.ops.doctor.memory import check_memory
from hindsight_redis.redis.connection import embedded_server, plain_password, profile_conflict
from hindsight_redis.redis.server.profiles import (
    PersistenceProfile,
    get_profile,
    profile_mismatches,
)
from hindsight_redis.settings import ConnectionSettings, ServerSettings


async def diagnose_server(
    connection: ConnectionSettings, server: ServerSettings, keys: Keys, report: DoctorReport
) -> DoctorReport:
    """Check one server's version, modules, persistence profile and the index health of
    ``keys.namespace``, into ``report``.

    With the embedded server and no explicit profile, the server is checked
    against the profile it was started with; an explicit profile that is not
    the server's is one problem, not a list of config differences.
    """
    profile = get_profile(connection.profile)
    check_persistence = True
    if connection.redis_url is None:
        embedded = embedded_server(connection, server)
        state = embedded.state()
        if state is None:
            profile = embedded.profile  # what a start would use: maybe the data dir's
            report.facts["profile"] = f"{profile.name} ({profile.description})"
            report.facts["server"] = f"embedded, not running (data dir {server.server_dir})"
            report.problems.append(
                "the embedded server is not running: run `hindsight-redis server start`"
            )
            if server.server_dir.is_dir():
                check_data_dir(server.server_dir, report)
            return report
        url = state.url
        report.facts["server"] = f"embedded, {url}, pid {state.pid}, data in {server.server_dir}"
        check_data_dir(server.server_dir, report)
        conflict = profile_conflict(connection, state.profile)
        if conflict is None:
            profile = get_profile(state.profile)
        else:
            report.problems.append(conflict)
            check_persistence = False
    else:
        url = connection.redis_url
        report.facts["server"] = "external (HINDSIGHT_REDIS_URL)"
    report.facts["profile"] = f"{profile.name} ({profile.description})"
    client = aioredis.Redis.from_url(
        url, socket_timeout=5, password=plain_password(connection.redis_password)
    )
    try:
        with redis_errors("check the server"):
            await _check_server(
                client, connection, server, keys, profile, report, check_persistence
            )
    except HindsightError as e:
        report.problems.append(str(e))
    finally:
        await client.aclose()
    return report


async def _check_server(
    client: aioredis.Redis,
    connection: ConnectionSettings,
    server: ServerSettings,
    keys: Keys,
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
    embedded = connection.redis_url is None
    log = embedded_server(connection, server).log_file if embedded else "the Redis log"
    await check_disk_writes(client, report, str(log))
    await check_exposure(client, connection, report)
    await check_hash_layout(client, report)
    await check_memory(client, report)
    if has_search:
        await check_search_gc(client, report)
        await check_index(client, keys, report)
        await check_data_format(client, keys, report)
