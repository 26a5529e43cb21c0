"""Health checks of a Redis deployment against the settings, for ``hindsight-redis doctor``.

``diagnose`` checks a cluster node by node (``cluster``) or one server
(``server``); both run the same checks (``checks``). Nothing secret is
reported: whether the server has a password, never the password.
"""

from __future__ import annotations

from hindsight_redis.core.keys import Keys
from hindsight_redis.errors import HindsightError
from hindsight_redis.ops.doctor.checks import DoctorReport, exposure_problem, loopback_only
from hindsight_redis.ops.doctor.cluster import diagnose_if_cluster
from hindsight_redis.ops.doctor.server import diagnose_server
from hindsight_redis.redis.cluster import cluster_url
from hindsight_redis.redis.connection import open_redis, require_search
from hindsight_redis.settings import Settings, config_file, redact_url

__all__ = ["DoctorReport", "diagnose", "exposure_problem", "liveness", "loopback_only"]


async def diagnose(settings: Settings) -> DoctorReport:
    """Check the server version, modules, persistence profile and index health
    (of every node, the shards and the namespaces' placement on a cluster).

    With the embedded server and no explicit profile, the server is checked
    against the profile it was started with; an explicit profile that is not
    the server's is one problem, not a list of config differences.
    """
    report = DoctorReport()
    path = config_file()
    report.facts["config"] = (
        str(path.resolve()) if path else "no config file; defaults and environment"
    )
    connection, server = settings.connection, settings.server
    keys = Keys(settings.key_prefix, settings.namespace)
    if await diagnose_if_cluster(connection, server, keys, report):
        return report
    return await diagnose_server(connection, server, keys, report)


async def liveness(settings: Settings) -> tuple[bool, str]:
    """Whether the configured Redis answers and serves search, and one line saying so: what
    a container's healthcheck asks (``doctor --liveness``). The rest of ``diagnose`` (a
    password, the profile, the index) is for people: a failure there is no reason to
    restart a worker. It never starts the embedded server."""
    connection = settings.connection
    url = connection.redis_url
    if url is None:
        return False, "no HINDSIGHT_REDIS_URL: --liveness checks a configured Redis"
    url = cluster_url(url) if connection.cluster else url
    try:
        client = await open_redis(
            url, connection.redis_password, timeout_s=3.0, connection=connection
        )
    except HindsightError as e:
        return False, f"not alive: {e}"
    try:
        await require_search(client, "check the search module")
    except HindsightError as e:
        return False, f"not alive: {e}"
    finally:
        await client.aclose()
    return True, f"alive: {redact_url(url)} answers, with search"
