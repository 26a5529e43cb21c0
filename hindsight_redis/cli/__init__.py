"""``hindsight-redis``: the operators' command line. A thin adapter over the client.

Library errors (``HindsightError``) are printed as one line, ``error: ...``,
with exit code 2; nothing else is caught. ``app`` builds the parser,
``service`` holds the commands that run the service, ``memories`` those on
memories (sweeps and cold storage included).
"""

from hindsight_redis.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
