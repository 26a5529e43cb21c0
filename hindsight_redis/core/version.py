"""The installed package's version, as every adapter reports it (CLI, MCP, metrics)."""

from __future__ import annotations

from functools import cache


@cache
def package_version() -> str:
    """The version of the installed ``hindsight-redis`` (``unknown`` in a source tree that
    is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hindsight-redis")
    except PackageNotFoundError:
        return "unknown"
