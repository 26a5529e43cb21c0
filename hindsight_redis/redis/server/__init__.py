"""The embedded Redis launcher and the persistence profiles."""

from hindsight_redis.redis.server.launcher import (
    EmbeddedServer,
    ServerState,
    find_binaries,
    free_port,
    port_taken,
    remembered_profile,
)
from hindsight_redis.redis.server.profiles import PROFILES, PersistenceProfile, get_profile

__all__ = [
    "PROFILES",
    "EmbeddedServer",
    "PersistenceProfile",
    "ServerState",
    "find_binaries",
    "free_port",
    "get_profile",
    "port_taken",
    "remembered_profile",
]
