"""Commands on memories: write, search, get, forget, restore, protect; sweeps and cold storage."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from hindsight_redis.cli.common import Handler, print_json, with_client
from hindsight_redis.cli.options import given_options
from hindsight_redis.core.requests import SearchOptions, WriteOptions
from hindsight_redis.errors import NotFound
from hindsight_redis.settings import Settings

if TYPE_CHECKING:
    from hindsight_redis.client.async_client import AsyncMemoryClient
    from hindsight_redis.core.models import SearchHit
    from hindsight_redis.lifecycle.cold import Progress

T = TypeVar("T")

# -- memories -------------------------------------------------------------------


def cmd_write(args: argparse.Namespace, settings: Settings) -> int:
    """``write TEXT`` (``-``: read it from stdin): accept one memory and print its receipt."""
    content = sys.stdin.read().rstrip("\r\n") if args.content == "-" else args.content
    options = given_options(args, WriteOptions)
    receipt = asyncio.run(with_client(settings, lambda c: c.write(content, **options)))
    print_json(receipt)
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    """``search QUERY``: print the hits with their scores."""
    options = given_options(args, SearchOptions)

    async def search(client: AsyncMemoryClient) -> tuple[list[SearchHit], str | None]:
        hits = await client.search(args.query, **options)
        return hits, None if hits else await client.pool.why_no_hit()

    hits, why = asyncio.run(with_client(settings, search))
    if args.json:
        print_json(hits)
    else:
        from hindsight_redis.ops.layout import screen_width
        from hindsight_redis.ops.render import hits_table

        print(hits_table(hits, width=screen_width()))
    if why:  # exit 0 all the same: no hit is an answer
        print(why, file=sys.stderr)
    return 0


def by_id(method: str) -> Handler:
    """The handler of ``get ID`` / ``restore ID``: print the memory; a missing one is the
    ``NotFound`` that ``forget`` and ``protect`` raise too (one message, exit 2)."""

    def handler(args: argparse.Namespace, settings: Settings) -> int:
        result = asyncio.run(with_client(settings, lambda c: getattr(c, method)(args.id)))
        if result is None:
            raise NotFound(f"no memory {args.id!r} in namespace {settings.namespace!r}")
        print_json(result)
        return 0

    return handler


def cmd_protect(args: argparse.Namespace, settings: Settings) -> int:
    """``protect ID [--off]``: keep a memory from sweeps and ``forget`` (or lift that)."""
    record = asyncio.run(with_client(settings, lambda c: c.protect(args.id, not args.off)))
    print_json(record)
    return 0


def cmd_forget(args: argparse.Namespace, settings: Settings) -> int:
    """``forget ID [--force]``: archive a memory (a protected one only with --force)."""
    record = asyncio.run(with_client(settings, lambda c: c.forget(args.id, force=args.force)))
    print_json(record)
    return 0


def cmd_sweep(args: argparse.Namespace, settings: Settings) -> int:
    """``sweep``: archive the lowest-retention memories (``--dry-run``: show them only)."""
    report = asyncio.run(
        with_client(
            settings,
            lambda c: c.sweep(
                dry_run=args.dry_run,
                threshold=args.threshold,
                max_active=args.max_active,
                batch=args.batch,
                show=args.show,
            ),
        )
    )
    if args.json:
        print_json(report)
    else:
        from hindsight_redis.ops.layout import screen_width
        from hindsight_redis.ops.render import sweep_lines

        print(sweep_lines(report, width=screen_width()))
    return 0


def _with_progress(
    settings: Settings,
    label: str,
    action: Callable[[AsyncMemoryClient, Progress], Coroutine[Any, Any, T]],
) -> T:
    """Run ``action(client, progress)``, drawing a tqdm bar on a terminal (stderr)."""
    from tqdm import tqdm

    bars: list[Any] = []

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, desc=label, unit="mem", disable=None, file=sys.stderr))
        bars[0].update(done - bars[0].n)

    try:
        return asyncio.run(with_client(settings, lambda c: action(c, progress)))
    finally:
        for bar in bars:
            bar.close()


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    """``export --out FILE [--status ...]``: memories, all fields and vectors, to a file."""
    report = _with_progress(
        settings, "export", lambda c, p: c.export(args.out, status=args.status, progress=p)
    )
    print(
        f"exported {report.count} {args.status} memories of {report.namespace} to "
        f"{report.path} ({report.bytes / 1e6:.1f} MB, {report.elapsed_s:.1f}s)"
    )
    return 0


def cmd_purge(args: argparse.Namespace, settings: Settings) -> int:
    """``purge --exported FILE``: delete archived memories in the file, unchanged since."""
    report = _with_progress(
        settings, "purge", lambda c, p: c.purge_exported(args.exported, progress=p)
    )
    print(
        f"removed {report.removed}; kept {report.kept_changed} changed since the export, "
        f"{report.kept_not_archived} not archived; {report.already_gone} already gone; "
        f"{report.archived_left} archived memories remain"
    )
    return 0


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    """``import FILE``: restore an export into the namespace; present memories are kept."""
    report = _with_progress(settings, "import", lambda c, p: c.import_file(args.file, progress=p))
    print(
        f"imported {report.imported} into {settings.namespace} "
        f"({report.already_present} already present, {report.reembedded} re-embedded)"
    )
    return 0
