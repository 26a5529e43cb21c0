"""The library's front doors: ``AsyncMemoryClient`` and its blocking twin ``MemoryClient``.

``async_client`` (write, search, one memory), ``pool`` (what acts on the
namespace as a whole, composed into the client), ``sync_client`` (the
same methods, blocking), ``records`` (reading one memory as a caller sees
it), ``items`` (keyed items, for LangGraph's store).
"""

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.client.sync_client import MemoryClient

__all__ = ["AsyncMemoryClient", "MemoryClient"]
