"""Persistence profiles: named trade-offs between speed and durability.

Pure module. A profile is a set of ``CONFIG`` values; the embedded server is
started with them, and an external server is checked against them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hindsight_redis.errors import ConfigError


@dataclass(frozen=True, slots=True)
class PersistenceProfile:
    """One named persistence setting of Redis."""

    name: str
    description: str
    config: Mapping[str, str]
    wait_aof: bool = False

    @property
    def persists(self) -> bool:
        """True when data survives a restart (RDB or AOF)."""
        return self.config["save"] != "" or self.config["appendonly"] == "yes"


PROFILES: dict[str, PersistenceProfile] = {
    p.name: p
    for p in (
        PersistenceProfile(
            "ephemeral",
            "no persistence: fastest, everything is lost on restart",
            {"save": "", "appendonly": "no"},
        ),
        PersistenceProfile(
            "snapshot",
            "RDB snapshots: minutes of writes may be lost on a crash",
            {"save": "3600 1 300 100 60 10000", "appendonly": "no"},
        ),
        PersistenceProfile(
            "balanced",
            "AOF fsync every second: at most about a second of writes lost",
            {"save": "", "appendonly": "yes", "appendfsync": "everysec"},
        ),
        PersistenceProfile(
            "durable",
            "AOF fsync always, writes wait for the fsync (WAITAOF): nothing acknowledged is lost",
            {"save": "", "appendonly": "yes", "appendfsync": "always"},
            wait_aof=True,
        ),
    )
}


def get_profile(name: str) -> PersistenceProfile:
    """The profile called ``name``; ``ConfigError`` lists the valid names otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError(
            f"unknown persistence profile {name!r}; choose one of {', '.join(PROFILES)}"
        ) from None


def _normalise_save(value: str) -> str:
    return " ".join(value.split())


def profile_mismatches(profile: PersistenceProfile, actual: Mapping[str, str]) -> list[str]:
    """Human-readable differences between a profile and a server's CONFIG values."""
    problems = []
    for key, wanted in profile.config.items():
        have = actual.get(key)
        if key == "save":
            if (wanted == "") != (_normalise_save(have or "") == ""):
                problems.append(f"save is {have!r}, profile {profile.name!r} wants {wanted!r}")
        elif have != wanted:
            problems.append(f"{key} is {have!r}, profile {profile.name!r} wants {wanted!r}")
    return problems
