"""Commands of trust: ``erase`` (every copy, with a receipt) and ``audit`` (the trail)."""

from __future__ import annotations

import argparse
import asyncio

from hindsight_redis.cli.common import print_json, with_client
from hindsight_redis.settings import Settings


def cmd_erase(args: argparse.Namespace, settings: Settings) -> int:
    """``erase [--id ID]... [--agent-id A] [--tag T] [--session-id S] [--source X]
    [--dry-run] [--json]``: erase every copy of what any of them names; print the receipt."""
    receipt = asyncio.run(
        with_client(
            settings,
            lambda c: c.erase(
                args.ids,
                agent_id=args.erase_agents,
                tag=args.tags,
                session_id=args.sessions,
                source=args.sources,
                dry_run=args.dry_run,
            ),
        )
    )
    if args.json:
        print_json(receipt)
    else:
        from hindsight_redis.ops.render import erasure_lines

        print(erasure_lines(receipt))
    return 0


def cmd_audit(args: argparse.Namespace, settings: Settings) -> int:
    """``audit [--since T] [--until T] [--agent A] [--action X] [--limit N] [--json]``:
    the audit trail, newest first (a table; ``--json`` the entries)."""
    entries = asyncio.run(
        with_client(
            settings,
            lambda c: c.audit(
                since=args.since,
                until=args.until,
                agent=args.agent,
                action=args.action,
                limit=args.limit,
            ),
        )
    )
    if args.json:
        print_json(entries)
    else:
        from hindsight_redis.ops.layout import screen_width
        from hindsight_redis.ops.render import audit_table

        print(audit_table(entries, width=screen_width()))
    return 0
