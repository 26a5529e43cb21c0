"""Deprecated: the client moved to ``hindsight_redis.client`` (kept for one release)."""

from __future__ import annotations

import warnings

from hindsight_redis.client import AsyncMemoryClient

__all__ = ["AsyncMemoryClient"]

warnings.warn(
    "hindsight_redis.store is deprecated: import AsyncMemoryClient from hindsight_redis "
    "(or hindsight_redis.client)",
    DeprecationWarning,
    stacklevel=2,
)
