"""Health checks of a Redis deployment against the settings, for ``hindsight-redis doctor``.

``diagnose`` checks a cluster node by node (``cluster``) or one server
(``server``); both run the same checks (``checks``). Nothing secret is
reported: whether the server has a password, never the password.
"""

from __future__ import annotations

from hindsight_redis.core.keys import Keys
from hindsight_redis.ops.doctor.checks import DoctorReport, exposure_problem, loopback_only
from hindsight_redis.ops.doctor.cluster import diagnose_if_cluster
from hindsight_redis.ops.doctor.server import diagnose_server
from hindsight_redis.settings import Settings, config_file

__all__ = ["DoctorReport", "diagnose", "exposure_problem", "loopback_only"]


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
