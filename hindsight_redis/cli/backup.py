"""``backup --out DIR`` and ``restore DIR``: the whole server, snapshot and back.

``restore`` also restores an archived memory (``restore ID``): an argument that
is a directory, or a path (with a ``/``), is a backup; anything else a memory id.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from hindsight_redis.cli.common import print_json
from hindsight_redis.cli.memories import by_id
from hindsight_redis.settings import Settings


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    """``backup --out DIR``: snapshot the server into a new directory, print its manifest."""
    from hindsight_redis.ops.backup import INDEXES, backup

    report = asyncio.run(backup(settings, args.out))
    manifest = report.manifest
    if args.json:
        print_json(manifest)
        return 0
    snapshot = manifest["snapshot"]
    print(f"backup written to {report.out}")
    print(f"  snapshot   {snapshot['file']}, {snapshot['bytes']} bytes, {manifest['keys']} keys")
    print(f"  indexes    {len(manifest['indexes'])} (definitions in {INDEXES})")
    _namespaces(manifest["namespaces"])
    if not manifest["quiescent"]:
        print("  (writes went on during the backup: the snapshot may hold a few more)")
    return 0


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    """``restore DIR [--force]`` (a backup), or ``restore ID`` (an archived memory)."""
    if not is_backup_path(args.id):
        return by_id("restore")(args, settings)
    from hindsight_redis.ops.restore import restore

    report = asyncio.run(restore(settings, Path(args.id), force=args.force))
    if args.json:
        print_json(
            {
                "data_dir": str(report.data_dir),
                "url": report.state.url,
                "profile": report.state.profile,
                "namespaces": report.namespaces,
                "missing_indexes": report.missing_indexes,
                "differences": report.differences,
                "moved_aside": str(report.moved_aside) if report.moved_aside else None,
            }
        )
        return 0 if report.ok else 1
    manifest = report.manifest
    print(f"restored the backup of {manifest['created_at']} into {report.data_dir}")
    if report.moved_aside is not None:
        print(f"  what was there is in {report.moved_aside}")
    print(f"  server     {report.state.url} (profile {report.state.profile}), running")
    _namespaces(report.namespaces)
    for name in report.missing_indexes:
        print(f"  problem: index {name} is missing (a worker recreates it on start)")
    for difference in report.differences:
        print(f"  problem: {difference}")
    if report.ok:
        print("  every index is back and every namespace is as backed up")
    return 0 if report.ok else 1


def is_backup_path(target: str) -> bool:
    """Whether ``restore``'s argument names a backup directory rather than a memory id."""
    return "/" in target or Path(target).is_dir()


def _namespaces(states: dict[str, dict[str, Any]]) -> None:
    for namespace, state in states.items():
        groups = ", ".join(
            f"{name} at {group['last_delivered']} ({group['pending']} pending)"
            for name, group in state["groups"].items()
        )
        memories = "no index" if state["memories"] is None else f"{state['memories']} memories"
        print(
            f"  {namespace:<10} {memories}, stream {state['stream_length']} entries "
            f"(last {state['stream_last_id']}), groups: {groups or 'none'}"
        )
