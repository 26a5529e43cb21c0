"""doctor's memory check on the INFO replies a server gives: eviction under maxmemory fails,
nearly full fails, no limit or room is a fact; and which restore argument is a backup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hindsight_redis.cli.backup import is_backup_path
from hindsight_redis.ops.doctor.checks import DoctorReport
from hindsight_redis.ops.doctor.memory import check_memory

MIB = 2**20


class _Info:
    def __init__(self, reply: dict[bytes, Any]) -> None:
        self.reply = reply

    async def info(self, section: str) -> dict[bytes, Any]:
        assert section == "memory"
        return self.reply


async def _check(used: int, limit: int, policy: str) -> DoctorReport:
    report = DoctorReport()
    reply = {b"used_memory": used, b"maxmemory": limit, b"maxmemory_policy": policy.encode()}
    await check_memory(_Info(reply), report)  # type: ignore[arg-type]
    return report


@pytest.mark.parametrize(
    "policy", ["allkeys-lru", "volatile-lru", "allkeys-random", "volatile-ttl"]
)
async def test_an_evicting_policy_with_maxmemory_fails(policy: str) -> None:
    report = await _check(10 * MIB, 100 * MIB, policy)
    assert (
        not report.ok
        and f"maxmemory-policy is {policy} with maxmemory 100.0 MiB" in (report.problems[0])
    )


async def test_no_maxmemory_or_room_left_is_only_a_fact() -> None:
    unlimited = await _check(10 * MIB, 0, "allkeys-lru")  # never evicts without a limit
    assert unlimited.ok and unlimited.facts["memory"] == (
        "10.0 MiB used, no maxmemory (policy allkeys-lru)"
    )
    roomy = await _check(10 * MIB, 100 * MIB, "noeviction")
    assert roomy.ok and "(10%), policy noeviction" in roomy.facts["memory"]


async def test_nearly_full_fails_before_writes_are_refused() -> None:
    report = await _check(95 * MIB, 100 * MIB, "noeviction")
    assert report.problems == [
        "Redis uses 95% of its maxmemory 100.0 MiB: at the limit it refuses every write; "
        "raise maxmemory, or archive and purge old memories"
    ]


def test_restore_takes_a_path_or_a_directory_as_a_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "monday").mkdir()
    assert is_backup_path("monday") and is_backup_path("backups/tuesday")
    assert not is_backup_path("02d40f29e914434796709e7ba266ef43")
