"""The parser of every subcommand, and ``main``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from hindsight_redis.cli.backup import cmd_backup, cmd_restore
from hindsight_redis.cli.common import ABOUT, Handler, settings_from_args
from hindsight_redis.cli.evaluate import add_arguments as eval_arguments
from hindsight_redis.cli.evaluate import cmd_eval
from hindsight_redis.cli.memories import (
    by_id,
    cmd_export,
    cmd_forget,
    cmd_import,
    cmd_protect,
    cmd_purge,
    cmd_search,
    cmd_sweep,
    cmd_write,
)
from hindsight_redis.cli.options import add_options, moment
from hindsight_redis.cli.parsing import Parser, parse
from hindsight_redis.cli.service import (
    cmd_conflicts,
    cmd_console,
    cmd_demo,
    cmd_dlq,
    cmd_doctor,
    cmd_mcp,
    cmd_metrics,
    cmd_reindex,
    cmd_review,
    cmd_server,
    cmd_stats,
    cmd_up,
    cmd_worker,
)
from hindsight_redis.cli.tokens import cmd_token
from hindsight_redis.cli.trust import cmd_audit, cmd_erase
from hindsight_redis.core.requests import SearchOptions, WriteOptions
from hindsight_redis.core.version import package_version
from hindsight_redis.errors import HindsightError
from hindsight_redis.trust.audit import ACTIONS

# -- parser ---------------------------------------------------------------------


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis-url",
        dest="redis_url",
        metavar="URL",
        help="redis://host:port/db of the Redis to use (default: the embedded server)",
    )
    parser.add_argument("--namespace", help="memory pool")
    parser.add_argument(
        "--profile",
        choices=["ephemeral", "snapshot", "balanced", "durable"],
        help="persistence profile",
    )
    parser.add_argument(
        "--server-dir",
        dest="server_dir",
        type=Path,
        metavar="DIR",
        help="the embedded Redis's data dir (default ~/.local/share/hindsight-redis)",
    )
    parser.add_argument(
        "--redis-port",
        dest="server_port",
        metavar="PORT",
        type=int,
        help="the embedded Redis's port (0: a free one; default 6479)",
    )
    parser.add_argument("--embedder", help='"local", "hash" or "litellm:<model>"')
    parser.add_argument(
        "--as-agent", dest="as_agent", help="act as this agent (default: HINDSIGHT_AGENT_ID)"
    )


MEMORY_ID = "the memory's id (from `write`, `search --json` or `get`)"


def _http(parser: argparse.ArgumentParser, port: int, what: str, *old: str) -> None:
    """``--host`` and ``--port``: where ``what`` serves HTTP (``old``: former spellings of
    ``--port``, still taken)."""
    parser.add_argument(
        "--host", default="127.0.0.1", help=f"the address {what} binds (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        *old,
        dest="port",
        type=int,
        default=None if what.startswith("MCP over") else port,
        help=f"the HTTP port of {what} (default {port})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = Parser(prog="hindsight-redis", description=ABOUT)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO")
    parser.add_argument(
        "--version", action="version", version=f"hindsight-redis {package_version()}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        _common(p)
        p.set_defaults(handler=handler)
        return p

    p = add("server", cmd_server, "start, stop or inspect the embedded Redis (or a local cluster)")
    p.add_argument("action", choices=["start", "stop", "status"], help="what to do")
    p.add_argument(
        "--cluster",
        type=int,
        nargs="?",
        const=0,
        metavar="MASTERS",
        help="a local Redis Cluster instead: MASTERS masters (default 3) on ports from "
        "--redis-port (default 7000)",
    )
    p.add_argument("--replicas", type=int, default=0, help="--cluster: replicas per master")
    add("demo", cmd_demo, "a scripted multi-agent session: what is kept, dropped and found")
    p = add("doctor", cmd_doctor, "check server version, modules, persistence and index")
    p.add_argument(
        "--liveness",
        action="store_true",
        help="only whether the configured Redis answers and serves search (container "
        "healthchecks: exit 0 or 1, one line)",
    )
    p = add("worker", cmd_worker, "run a worker until SIGTERM (or --burst: drain and exit)")
    p.add_argument("--burst", action="store_true", help="process what is queued, then exit")
    served = p.add_mutually_exclusive_group()
    served.add_argument(
        "--all-namespaces", action="store_true", help="serve every namespace, new ones too"
    )
    served.add_argument("--namespaces", help="serve these, comma-separated (a,b,c)")
    p.add_argument(
        "--role",
        choices=["all", "ingest", "refine"],
        help="all: ingest and refine (default: the worker_role setting); ingest: never "
        "refine; refine: only add contextual vectors (--burst: until none waits)",
    )
    p = add("write", cmd_write, "write one memory")
    p.add_argument("content", help="the memory's text; - reads it from stdin")
    add_options(p, WriteOptions)
    p = add("search", cmd_search, "search memories")
    p.add_argument("query", help="what to look for, in words")
    add_options(p, SearchOptions)
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    eval_arguments(add("eval", cmd_eval, "measure search on a golden file, or on the pool itself"))
    add("get", by_id("get"), "show one memory").add_argument("id", help=MEMORY_ID)
    p = add("restore", cmd_restore, "restore an archived memory, or a backup (DIR)")
    p.add_argument(
        "id",
        metavar="ID|DIR",
        help=f"{MEMORY_ID}; or a directory written by `backup` (a path: with a /), restored "
        "into a fresh --server-dir and served there",
    )
    p.add_argument("--force", action="store_true", help="DIR: move what --server-dir holds aside")
    p.add_argument("--json", action="store_true", help="DIR: print the summary as JSON")
    p = add("backup", cmd_backup, "snapshot the server (RDB, index definitions) into a new DIR")
    p.add_argument("--out", required=True, type=Path, help="the directory to write (new or empty)")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON")
    p = add("protect", cmd_protect, "protect a memory from sweeps and forget (--off: lift it)")
    p.add_argument("id", help=MEMORY_ID)
    p.add_argument("--off", action="store_true", help="lift the protection instead")
    p = add("forget", cmd_forget, "archive a memory (restorable)")
    p.add_argument("id", help=MEMORY_ID)
    p.add_argument("--force", action="store_true", help="archive it even if protected")
    p = add("sweep", cmd_sweep, "archive the memories with the lowest retention scores")
    p.add_argument("--dry-run", action="store_true", help="show what would be archived")
    p.add_argument("--threshold", type=float, help="archive those scoring below (0..1)")
    p.add_argument("--max-active", type=int, help="archive the lowest beyond this many")
    p.add_argument("--batch", type=int, help="memories per step (default 1000)")
    p.add_argument("--show", type=int, default=20, help="rows of the table (0: all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = add("export", cmd_export, "write memories to a .jsonl.gz file (cold storage)")
    p.add_argument("--out", required=True, type=Path, help="the file to write")
    p.add_argument(
        "--status",
        choices=["archived", "active", "all"],
        default="archived",
        help="which memories (default: archived)",
    )
    p = add("purge", cmd_purge, "delete archived memories that are in an export, unchanged")
    p.add_argument("--exported", required=True, type=Path, help="the export file")
    p = add("import", cmd_import, "restore an export file into --namespace (idempotent)")
    p.add_argument("file", type=Path, help="a file written by `export`")
    p = add("stats", cmd_stats, "counters, backlog, pending, dead letters, live workers")
    p.add_argument("--json", action="store_true", help="print the stats as JSON")
    # --port is always the HTTP port a command serves on (the embedded Redis's: --redis-port).
    p = add("metrics", cmd_metrics, "serve Prometheus /metrics for every namespace")
    _http(p, 9464, "/metrics")
    p = add("mcp", cmd_mcp, "serve memory_write/search/get/forget/restore/stats over MCP")
    p.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio: for the one client that starts it; http: a server (default: stdio)",
    )
    _http(p, 8765, "MCP over --transport http", "--mcp-port")
    p.add_argument(
        "--workers", type=int, default=1, help="in-process workers (0: rely on external ones)"
    )
    p = add("up", cmd_up, "Redis + workers + MCP over HTTP, in the foreground")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    _http(p, 8765, "MCP", "--mcp-port")
    add("reindex", cmd_reindex, "rebuild the index under --embedder without downtime")
    p = add("conflicts", cmd_conflicts, "contradicting memories: list, resolve ID, or the log")
    p.add_argument(
        "action",
        nargs="?",
        choices=["list", "resolve", "log"],
        default="list",
        help="list the pairs (default), resolve one, or show the log of decisions",
    )
    p.add_argument("id", nargs="?", help="resolve: the memory (ids from `conflicts`)")
    p.add_argument("--keep", choices=["new", "old", "both"], help="resolve: which one stays")
    p.add_argument("--with", dest="other_id", help="resolve: only its conflict with this memory")
    p.add_argument("--note", help="resolve: why (recorded with who and when)")
    p.add_argument("--limit", type=int, default=100, help="records at most (default 100)")
    p.add_argument("--json", action="store_true", help="list: print the records as JSON")
    p = add("review", cmd_review, "writes held for review: list, approve ID, reject ID")
    p.add_argument(
        "action",
        nargs="?",
        choices=["list", "approve", "reject"],
        default="list",
        help="list the held writes (default), approve one or reject one",
    )
    p.add_argument("id", nargs="?", help="approve/reject: the held write (ids from `review`)")
    p.add_argument(
        "--state", choices=["held", "rejected", "all"], default="held", help="list: which"
    )
    p.add_argument("--limit", type=int, default=100, help="records at most (default 100)")
    p.add_argument("--wait", action="store_true", help="approve: until it is indexed")
    p.add_argument("--json", action="store_true", help="list: print the records as JSON")
    p = add("console", cmd_console, "a web console: namespaces, memories, drops, conflicts, DLQ")
    _http(p, 8766, "the console", "--console-port")
    p.add_argument(
        "--allow-host",
        dest="allow_hosts",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests naming this host (a DNS name, a proxy's); others get 421",
    )
    p.add_argument(
        "--admin-token",
        help="an admin token (`token create --scope admin`; or HINDSIGHT_CONSOLE_TOKEN): "
        "resolve, restore and replay in its namespace",
    )
    p = add("token", cmd_token, "create, list or revoke the HTTP transport's access tokens")
    token = p.add_subparsers(dest="token_action", required=True, metavar="ACTION")
    t = token.add_parser("create", help="print a new token once (only its hash is stored)")
    # Also after the action (`token create --namespace NS`), without clobbering `token --namespace`.
    t.add_argument("--namespace", default=argparse.SUPPRESS, help="the token's memory pool")
    t.add_argument("--redis-url", dest="redis_url", default=argparse.SUPPRESS, help="Redis URL")
    t.add_argument("--agent-id", dest="token_agent", required=True, help="who the token acts as")
    t.add_argument(
        "--scope",
        choices=["read", "write", "admin"],
        default="write",
        help="read: search and get; write: also write and forget; admin: also the operators' "
        "tools (default: write)",
    )
    t.add_argument("--ttl-days", type=float, help="expires after N days (default: never)")
    t.add_argument("--json", action="store_true", help="print the token and its record as JSON")
    t = token.add_parser("list", help="the live tokens (never the tokens themselves)")
    t.add_argument("--redis-url", dest="redis_url", default=argparse.SUPPRESS, help="Redis URL")
    t.add_argument("--json", action="store_true", help="print the records as JSON")
    t = token.add_parser("revoke", help="revoke a token by its id (see token list)")
    t.add_argument("--redis-url", dest="redis_url", default=argparse.SUPPRESS, help="Redis URL")
    t.add_argument("token_id", help="the token's id (not the token)")
    p = add("erase", cmd_erase, "erase every copy of memories, for good, with a receipt")
    for flag, dest, what in (
        ("--id", "ids", "a memory id"),
        ("--agent-id", "erase_agents", "everything this agent wrote"),
        ("--tag", "tags", "every memory with this tag (user:alice)"),
        ("--session-id", "sessions", "every memory of this session"),
        ("--source", "sources", "every memory from this source"),
    ):
        metavar = flag.lstrip("-").replace("-", "_").upper()
        p.add_argument(
            flag, dest=dest, action="append", metavar=metavar, help=f"{what} (repeat; any: union)"
        )
    p.add_argument("--dry-run", action="store_true", help="count what would go; erase nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    p = add("audit", cmd_audit, "the audit trail: who wrote, resolved, forgot, erased what")
    p.add_argument(
        "--since",
        type=moment,
        help="entries from then: unix seconds, or an ISO date/datetime (UTC unless it says)",
    )
    p.add_argument(
        "--until",
        type=moment,
        help="entries up to then: unix seconds, or an ISO date/datetime (UTC unless it says)",
    )
    p.add_argument("--agent", help="entries by this agent")
    p.add_argument("--action", choices=ACTIONS, help="entries of this action")
    p.add_argument("--limit", type=int, default=50, help="entries at most (default 50)")
    p.add_argument("--json", action="store_true", help="print the entries as JSON")
    p = add("dlq", cmd_dlq, "list or replay dead letters")
    p.add_argument("action", choices=["list", "replay"], help="list them, or replay them")
    p.add_argument("ids", nargs="*", help="dead-letter ids to replay (default: all)")
    p.add_argument("--count", type=int, default=100, help="list: at most (default 100)")
    p.add_argument("--json", action="store_true", help="list: print the dead letters as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``hindsight-redis``.

    Every mistake a user can make ends here as one line, ``error: ...``, exit
    code 2: a ``HindsightError`` (bad settings, input, files, ports, an
    unreachable Redis...); argparse's own errors take three lines, also exit 2.
    Anything else is a bug and keeps its traceback; ``-v`` shows the traceback
    of the one-line errors too.
    """
    try:
        try:
            return _run(argv)
        finally:  # here, so that a closed pipe is met inside the try (--help's output too)
            if not sys.stdout.closed:  # `mcp` over stdio closes it when its client leaves
                sys.stdout.flush()
    except BrokenPipeError:
        # The reader left (`stats | head -1`). Unix tools die of SIGPIPE there, silently,
        # and the shell reports 128 + 13 = 141; Python ignores SIGPIPE (so that a socket's
        # reset is an exception), so do the same by hand: no message, exit 141. What is
        # still buffered goes to /dev/null, or flushing it at exit would complain again.
        _stdout_to_devnull()
        return 141
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, as the shell reports a tool Ctrl-C stopped


def _run(argv: Sequence[str] | None) -> int:
    args = parse(build_parser(), argv)
    verbose: bool = args.verbose
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s" if verbose else "%(levelname)s: %(message)s",
    )
    try:
        settings = settings_from_args(args)
        code: int = args.handler(args, settings)
        return code
    except HindsightError as e:
        if verbose:
            traceback.print_exc()
        print(f"error: {e}", file=sys.stderr)
        return 2


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (a captured stdout): nothing to drop
        pass
