"""``hindsight-redis``: the operators' command line. A thin adapter over the client.

Library errors (``HindsightError``) are printed as one line, ``error: ...``,
with exit code 2; nothing else is caught.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hindsight_redis.errors import HindsightError
from hindsight_redis.models import WRITE_FIELDS
from hindsight_redis.settings import Settings, load_settings

if TYPE_CHECKING:
    from hindsight_redis.client import AsyncMemoryClient

Handler = Callable[[argparse.Namespace, Settings], int]
ABOUT = (
    "hindsight-redis: a shared, searchable long-term memory for LLM agents, on Redis. "
    "Agents write memories; workers filter, summarize, embed and index them; "
    "search finds them by meaning and by keyword."
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hindsight-redis")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def _print_json(value: Any) -> None:
    def default(obj: Any) -> Any:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return dataclasses.asdict(obj)
        return str(obj)

    print(json.dumps(value, indent=2, ensure_ascii=False, default=default))


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    for name in ("redis_url", "namespace", "profile", "server_dir", "server_port", "embedder"):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    return load_settings(**overrides)


async def _with_client(
    settings: Settings, action: Callable[[AsyncMemoryClient], Coroutine[Any, Any, Any]]
) -> Any:
    from hindsight_redis.client import AsyncMemoryClient

    async with AsyncMemoryClient(settings) as client:
        return await action(client)


# -- server ---------------------------------------------------------------------


def cmd_server(args: argparse.Namespace, settings: Settings) -> int:
    """``server start|stop|status``: the embedded Redis."""
    from hindsight_redis.connection import embedded_server

    server = embedded_server(settings)
    if args.action == "start":
        state = server.start()
        print(f"embedded redis running at {state.url} (profile {state.profile}, pid {state.pid})")
        print(f"data dir: {server.data_dir}")
    elif args.action == "stop":
        stopped = server.stop()
        print("stopped" if stopped else "not running")
    else:
        running = server.state()
        if running is None:
            print(f"not running (data dir {server.data_dir})")
            return 3
        print(f"running at {running.url} (profile {running.profile}, pid {running.pid})")
    return 0


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    """``doctor``: facts and problems of the deployment; exit 1 on problems."""
    from hindsight_redis.doctor import diagnose

    report = asyncio.run(diagnose(settings))
    for name, value in report.facts.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        print(f"{name:>15}: {value}")
    if report.ok:
        print("\nall checks passed")
        return 0
    print("\nproblems:")
    for problem in report.problems:
        print(f"  - {problem}")
    return 1


# -- workers --------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    """``worker [--burst]``: consume until SIGTERM, or drain and exit."""
    from hindsight_redis.pipeline.worker import Worker

    report = Worker(settings).run(burst=args.burst, install_signal_handlers=True)
    _print_json(report)
    return 0


def cmd_dlq(args: argparse.Namespace, settings: Settings) -> int:
    """``dlq list|replay [ids]``: inspect or retry dead letters."""
    if args.action == "list":
        letters = asyncio.run(_with_client(settings, lambda c: c.dead_letters(args.count)))
        _print_json(letters)
    else:
        ids = args.ids or None
        replayed = asyncio.run(_with_client(settings, lambda c: c.replay_dead_letters(ids)))
        print(f"replayed {len(replayed)} dead letter(s)")
    return 0


# -- memories -------------------------------------------------------------------


def cmd_write(args: argparse.Namespace, settings: Settings) -> int:
    """``write TEXT`` (``-``: read it from stdin): accept one memory and print its receipt."""
    content = sys.stdin.read().rstrip("\r\n") if args.content == "-" else args.content
    fields = {name: getattr(args, name) for name in WRITE_FIELDS if name != "content"}
    fields["tags"] = fields["tags"] or ()
    receipt = asyncio.run(_with_client(settings, lambda c: c.write(content, **fields)))
    _print_json(receipt)
    return 0


SEARCH_FILTERS = ("agent_id", "session_id", "task_type", "tags", "since", "until")


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    """``search QUERY``: print the hits with their scores."""
    filters = {name: getattr(args, name) for name in SEARCH_FILTERS}
    hits = asyncio.run(
        _with_client(
            settings,
            lambda c: c.search(
                args.query,
                top_k=args.top_k,
                mode=args.mode,
                include_archived=args.include_archived,
                **filters,
            ),
        )
    )
    if args.json:
        _print_json(hits)
    else:
        from hindsight_redis.render import hits_table

        print(hits_table(hits))
    return 0


def _by_id(method: str) -> Handler:
    def handler(args: argparse.Namespace, settings: Settings) -> int:
        result = asyncio.run(_with_client(settings, lambda c: getattr(c, method)(args.id)))
        if result is None:
            print(f"no memory {args.id!r}", file=sys.stderr)
            return 1
        _print_json(result)
        return 0

    return handler


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    """``reindex --embedder X``: rebuild the index under another embedder."""
    if not args.embedder:
        print("error: reindex needs --embedder (the new one)", file=sys.stderr)
        return 2
    result = asyncio.run(_with_client(settings, lambda c: c.reindex(args.embedder)))
    _print_json(result)
    print("restart workers with the new embedder (HINDSIGHT_EMBEDDER)", file=sys.stderr)
    return 0


def cmd_conflicts(args: argparse.Namespace, settings: Settings) -> int:
    """``conflicts``: memories flagged as contradicting another."""
    _print_json(asyncio.run(_with_client(settings, lambda c: c.conflicts(args.limit))))
    return 0


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    """``stats``: counters, backlog, pending, dead letters, live workers."""
    stats = asyncio.run(_with_client(settings, lambda c: c.stats()))
    if args.json:
        _print_json(stats)
    else:
        from hindsight_redis.render import stats_lines

        print(stats_lines(stats))
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    """``mcp --transport stdio|http``: serve the memory tools."""
    from hindsight_redis.mcp_server import run_server

    run_server(settings, args.transport, args.host, args.mcp_port)
    return 0


def cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    """``up``: Redis (embedded unless configured), N worker processes and MCP over HTTP.

    Ctrl-C (or SIGTERM) stops the workers, the MCP server and the embedded
    Redis if ``up`` started it; a Redis that was already running is left
    running, and the banner says so.
    """
    import os
    import signal
    import subprocess

    from hindsight_redis.connection import embedded_server, resolve
    from hindsight_redis.mcp_server import run_server

    server = embedded_server(settings) if settings.embedded else None
    started_here = server is not None and server.state() is None
    target = resolve(settings)
    # Pinned for the children: the same server and the profile in effect there.
    settings = settings.model_copy(update={"redis_url": target.url, "profile": target.profile.name})
    env = {**os.environ, **settings.to_env()}
    workers = [
        subprocess.Popen([sys.executable, "-m", "hindsight_redis.cli", "worker"], env=env)
        for _ in range(args.workers)
    ]
    if server is None:
        redis_note = f"Redis {target.url} (external, left running)"
    elif started_here:
        redis_note = f"embedded Redis {target.url} (started now, stopped with the rest)"
    else:
        redis_note = (
            f"embedded Redis {target.url} (was already running and stays up: "
            "`hindsight-redis server stop` stops it)"
        )
    print(
        f"{redis_note}; {args.workers} worker(s); MCP at http://{args.host}:{args.mcp_port}/mcp. "
        "Ctrl-C stops the workers and the MCP server.",
        file=sys.stderr,
    )
    # uvicorn re-raises a captured SIGTERM/SIGINT once it has shut down; turn it
    # into SystemExit so the cleanup below runs and no traceback is printed.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    try:
        run_server(settings, "http", args.host, args.mcp_port)
    finally:
        for proc in workers:
            proc.terminate()  # SIGTERM: each finishes its batch, acks, exits
        for proc in workers:
            proc.wait(timeout=60)
        if server is not None and started_here:
            server.stop()
            print("stopped the embedded Redis", file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    """``demo``: the scripted multi-agent session."""
    from hindsight_redis.demo import run_demo

    return asyncio.run(run_demo(settings, print))


# -- parser ---------------------------------------------------------------------


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis-url", dest="redis_url", help="Redis URL (default: embedded server)"
    )
    parser.add_argument("--namespace", help="memory pool")
    parser.add_argument(
        "--profile",
        choices=["ephemeral", "snapshot", "balanced", "durable"],
        help="persistence profile",
    )
    parser.add_argument(
        "--server-dir", dest="server_dir", type=Path, help="embedded server data dir"
    )
    parser.add_argument(
        "--port", dest="server_port", type=int, help="embedded server port (0: free)"
    )
    parser.add_argument("--embedder", help='"local", "hash" or "litellm:<model>"')


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="hindsight-redis", description=ABOUT)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO")
    parser.add_argument("--version", action="version", version=f"hindsight-redis {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        _common(p)
        p.set_defaults(handler=handler)
        return p

    p = add("server", cmd_server, "start, stop or inspect the embedded Redis")
    p.add_argument("action", choices=["start", "stop", "status"])
    add("demo", cmd_demo, "a scripted multi-agent session: what is kept, dropped and found")
    add("doctor", cmd_doctor, "check server version, modules, persistence and index")
    p = add("worker", cmd_worker, "run a worker until SIGTERM (or --burst: drain and exit)")
    p.add_argument("--burst", action="store_true")
    p = add("write", cmd_write, "write one memory")
    p.add_argument("content", help="the memory's text; - reads it from stdin")
    for flag in ("agent-id", "session-id", "task-type", "source", "idempotency-key"):
        p.add_argument(f"--{flag}")
    p.add_argument("--tag", dest="tags", action="append", help="repeat for several tags")
    p.add_argument("--protected", action="store_true", help="never archived by sweeps")
    p.add_argument("--visibility", choices=["shared", "private"], default="shared")
    p.add_argument("--importance", type=float, help="0..1 hint that nudges the write score")
    p.add_argument("--wait", action="store_true", help="return once searchable (or dropped)")
    p.add_argument("--timeout-s", type=float, help="longest --wait (default 30)")
    p = add("search", cmd_search, "search memories")
    p.add_argument("query")
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--mode", choices=["hybrid", "vector", "keyword"], default="hybrid")
    for flag in ("agent-id", "session-id", "task-type"):
        p.add_argument(f"--{flag}")
    p.add_argument("--tag", dest="tags", action="append", help="all must match")
    p.add_argument("--since", type=float, help="created at or after (unix seconds)")
    p.add_argument("--until", type=float, help="created at or before (unix seconds)")
    p.add_argument("--include-archived", action="store_true")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    for name, text in (
        ("get", "show one memory"),
        ("forget", "archive a memory"),
        ("restore", "restore an archived memory"),
        ("protect", "protect a memory from sweeps"),
    ):
        add(name, _by_id(name), text).add_argument("id")
    p = add("stats", cmd_stats, "counters, backlog, pending, dead letters, live workers")
    p.add_argument("--json", action="store_true", help="print the stats as JSON")
    p = add("mcp", cmd_mcp, "serve memory_write/search/get/forget/restore/stats over MCP")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: address to bind")
    p.add_argument("--mcp-port", dest="mcp_port", type=int, default=8765, help="http: port")
    p = add("up", cmd_up, "Redis + workers + MCP over HTTP, in the foreground")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--host", default="127.0.0.1", help="MCP address to bind")
    p.add_argument("--mcp-port", dest="mcp_port", type=int, default=8765, help="MCP port")
    add("reindex", cmd_reindex, "rebuild the index under --embedder without downtime")
    p = add("conflicts", cmd_conflicts, "memories flagged as contradicting another")
    p.add_argument("--limit", type=int, default=100)
    p = add("dlq", cmd_dlq, "list or replay dead letters")
    p.add_argument("action", choices=["list", "replay"])
    p.add_argument("ids", nargs="*", help="dead-letter ids to replay (default: all)")
    p.add_argument("--count", type=int, default=100)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``hindsight-redis``."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        settings = _settings(args)
        code: int = args.handler(args, settings)
        return code
    except HindsightError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
