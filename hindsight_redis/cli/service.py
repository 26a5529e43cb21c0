"""Commands that run or inspect the service: server, doctor, worker, dlq, reindex,
conflicts, review, console, stats, metrics, mcp, up, demo."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any, Literal

from hindsight_redis.cli.common import check_port_free, print_json, with_client
from hindsight_redis.errors import HindsightError, InvalidArgument
from hindsight_redis.settings import Settings, redact_url

if TYPE_CHECKING:
    from hindsight_redis.client.async_client import AsyncMemoryClient
    from hindsight_redis.core.models import MemoryRecord

# -- server ---------------------------------------------------------------------


def cmd_server(args: argparse.Namespace, settings: Settings) -> int:
    """``server start|stop|status``: the embedded Redis (``--cluster``: a local cluster)."""
    from hindsight_redis.redis.connection import embedded_server

    if args.cluster is not None:
        from hindsight_redis.cli.cluster import cmd_cluster_server

        return cmd_cluster_server(args, settings)
    server = embedded_server(settings.connection, settings.server)
    if args.action == "start":
        from hindsight_redis.providers.embedders import prepare_query_model

        state = server.start()
        print(f"embedded redis running at {state.url} (profile {state.profile}, pid {state.pid})")
        print(f"data dir: {server.data_dir}")
        # Here rather than in a user's first search, which would wait for it.
        prepare_query_model(settings.embedding, announce=print)
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
    """``doctor``: facts and problems of the deployment; exit 1 on problems. ``--liveness``:
    only whether the configured Redis answers with search (exit 1 when not)."""
    from hindsight_redis.ops.doctor import diagnose, liveness

    if args.liveness:
        alive, line = asyncio.run(liveness(settings))
        print(line)
        return 0 if alive else 1
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
    """``worker [--burst] [--all-namespaces | --namespaces a,b] [--role R]``: consume until
    SIGTERM, or drain and exit; ``--namespace``'s one, every namespace, or those listed;
    ``--role refine`` only refines (``--burst``: until nothing waits for it)."""
    from hindsight_redis.pipeline.worker import Worker

    namespaces: list[str] | Literal["*"] | None = None
    if args.all_namespaces:
        namespaces = "*"
    elif args.namespaces is not None:
        namespaces = [name.strip() for name in args.namespaces.split(",") if name.strip()]
    worker = Worker(settings, namespaces=namespaces, role=args.role)
    if namespaces == "*":
        served = f"every namespace of prefix {settings.key_prefix!r}, new ones too"
    elif namespaces:
        served = f"namespaces {', '.join(namespaces)}"
    else:
        served = f"namespace {settings.namespace!r}"
    then = "drains what waits, then exits" if args.burst else "SIGTERM or Ctrl-C stops it"
    if worker.role != "all":
        served += f", role {worker.role}"
    _say_start(settings, f"worker {worker.name}", served, then)
    report = worker.run(burst=args.burst, install_signal_handlers=True, own_process=True)
    print_json(report)
    return 0


def cmd_dlq(args: argparse.Namespace, settings: Settings) -> int:
    """``dlq list|replay [ids]``: inspect or retry dead letters."""
    if args.action == "list":
        letters = asyncio.run(with_client(settings, lambda c: c.dead_letters(args.count)))
        if args.json:
            print_json(letters)
        else:
            from hindsight_redis.ops.layout import screen_width
            from hindsight_redis.ops.render import dead_letters_table

            print(dead_letters_table(letters, width=screen_width()))
    else:
        ids = args.ids or None
        replayed = asyncio.run(with_client(settings, lambda c: c.replay_dead_letters(ids)))
        print(f"replayed {len(replayed)} dead letter(s)")
    return 0


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    """``reindex --embedder X``: rebuild the index under another embedder."""
    if not args.embedder:
        print("error: reindex needs --embedder (the new one)", file=sys.stderr)
        return 2
    from hindsight_redis.providers.priority import one_blas_thread

    one_blas_thread()  # a long re-embedding in a process of ours (providers.priority)
    result = asyncio.run(with_client(settings, lambda c: c.reindex(args.embedder)))
    print_json(result)
    print("restart workers with the new embedder (HINDSIGHT_EMBEDDER)", file=sys.stderr)
    return 0


def cmd_conflicts(args: argparse.Namespace, settings: Settings) -> int:
    """``conflicts [list]``: flagged pairs; ``conflicts resolve ID --keep new|old|both
    [--with ID] [--note ...]``: decide one; ``conflicts log``: the decisions taken."""
    if args.action == "resolve":
        if not args.id or not args.keep:
            raise InvalidArgument("conflicts resolve needs an id and --keep new|old|both")
        done = asyncio.run(
            with_client(
                settings,
                lambda c: c.resolve_conflict(
                    args.id, args.keep, other_id=args.other_id, note=args.note
                ),
            )
        )
        print_json(done)
        for item in done:
            gone = f"archived {item.archived}" if item.archived else "both kept"
            print(f"resolved {item.memory_id} / {item.other_id}: {gone}", file=sys.stderr)
        return 0
    if args.action == "log":
        print_json(asyncio.run(with_client(settings, lambda c: c.conflict_resolutions(args.limit))))
        return 0
    if args.json:
        print_json(asyncio.run(with_client(settings, lambda c: c.conflicts(args.limit))))
        return 0
    from hindsight_redis.ops.layout import colours, screen_width
    from hindsight_redis.ops.render import conflicts_table

    records, others = asyncio.run(with_client(settings, lambda c: _flagged(c, args.limit)))
    print(conflicts_table(records, others, width=screen_width(), styled=colours()))
    return 0


async def _flagged(
    client: AsyncMemoryClient, limit: int
) -> tuple[list[MemoryRecord], dict[str, MemoryRecord]]:
    """The flagged memories, and those they conflict with that are not among them."""
    records = await client.conflicts(limit)
    listed = {r.id for r in records}
    others = {}
    for other_id in dict.fromkeys(o for r in records for o in r.conflicts_with):
        if other_id not in listed:
            other = await client.get(other_id)
            if other is not None:
                others[other_id] = other
    return records, others


def cmd_review(args: argparse.Namespace, settings: Settings) -> int:
    """``review [list]``: the writes held for review; ``review approve ID [--wait]``:
    index one; ``review reject ID``: keep it out, for the record."""
    if args.action in ("approve", "reject"):
        if not args.id:
            raise InvalidArgument(f"review {args.action} needs the id of a held write")
        if args.action == "approve":
            done: Any = asyncio.run(
                with_client(settings, lambda c: c.approve(args.id, wait=args.wait))
            )
        else:
            done = asyncio.run(with_client(settings, lambda c: c.reject(args.id)))
        print_json(done)
        print(f"{args.action}d {args.id}: {done.status}", file=sys.stderr)
        return 0
    records = asyncio.run(
        with_client(settings, lambda c: c.held(state=args.state, limit=args.limit))
    )
    if args.json:
        print_json(records)
    else:
        from hindsight_redis.ops.layout import screen_width
        from hindsight_redis.ops.render import held_table

        print(held_table(records, width=screen_width()))
    return 0


def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    """``console``: the operators' web console until interrupted (the admin token may
    also come from ``HINDSIGHT_CONSOLE_TOKEN``, kept off the command line)."""
    import os
    import signal

    from hindsight_redis.service.console import serve_console
    from hindsight_redis.service.console.app import check_admin_token

    token = args.admin_token or os.environ.get("HINDSIGHT_CONSOLE_TOKEN") or None
    check_port_free(args.host, args.port)
    mode = "read-only (--admin-token to resolve, restore, replay)"
    if token:  # checked before anything is said: a wrong token must not read "admin"
        admin = asyncio.run(check_admin_token(settings, token))
        mode = f"admin (as {admin.agent_id!r} in namespace {admin.namespace!r})"
    print(f"console, {mode}, at http://{args.host}:{args.port}/", file=sys.stderr)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    serve_console(
        settings,
        host=args.host,
        port=args.port,
        admin_token=token,
        allowed_hosts=args.allow_hosts,
    )
    return 0


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    """``stats``: counters, backlog, pending, dead letters, live workers."""
    stats = asyncio.run(with_client(settings, lambda c: c.stats()))
    if args.json:
        print_json(stats)
    else:
        from hindsight_redis.ops.render import stats_lines

        print(stats_lines(stats))
    return 0


def cmd_metrics(args: argparse.Namespace, settings: Settings) -> int:
    """``metrics --port P``: serve Prometheus ``/metrics`` until interrupted."""
    import signal

    from hindsight_redis.ops.metrics import serve

    check_port_free(args.host, args.port)
    url = f"http://{args.host}:{args.port}/metrics"
    served = f"every namespace of prefix {settings.key_prefix!r}"
    _say_start(settings, f"Prometheus metrics at {url}", served, "Ctrl-C stops it")
    # uvicorn re-raises the signal that stopped it once it has shut down: exit 0 instead.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    serve(settings, args.host, args.port)
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    """``mcp --transport stdio|http``: serve the memory tools."""
    from hindsight_redis.service.run import run_server

    if args.workers < 0:
        raise InvalidArgument("--workers must be 0 or more")
    if args.transport == "stdio" and args.port is not None:
        raise InvalidArgument("--port is the HTTP port: it needs --transport http")
    port = 8765 if args.port is None else args.port
    http = args.transport == "http"
    if http:
        check_port_free(args.host, port)
    what = f"MCP at http://{args.host}:{port}/mcp" if http else "MCP over stdio"
    served = f"namespace {settings.namespace!r}" + (" (or a token's own)" if http else "")
    workers = (
        f"{args.workers} in-process worker(s) for every namespace"
        if args.workers
        else "no in-process worker (run `hindsight-redis worker`)"
    )
    stops = "Ctrl-C stops it" if http else "ends when its client closes stdin"
    _say_start(settings, what, served, f"{workers}; {stops}")
    if args.workers:  # this process is ours: its workers' numpy runs one BLAS thread
        from hindsight_redis.providers.priority import one_blas_thread

        one_blas_thread()
    run_server(settings, args.transport, args.host, port, workers=args.workers)
    return 0


def _say_start(settings: Settings, what: str, served: str, then: str) -> None:
    """One line on stderr as a long-running command starts: what, which namespace(s), which
    Redis (found, or the embedded one started, as the command would) and profile."""
    from hindsight_redis.ops.render import start_line
    from hindsight_redis.redis.connection import resolve

    try:
        target = resolve(settings.connection, settings.server)
        redis, profile = redact_url(target.url), target.profile.name
    except HindsightError as e:  # the command itself says what is wrong, or serves without
        redis, profile = f"not reachable yet ({e})", None
    line = start_line(what, namespaces=served, redis=redis, profile=profile, then=then)
    print(line, file=sys.stderr, flush=True)


def cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    """``up``: Redis (embedded unless configured), N worker processes and MCP over HTTP.

    Ctrl-C (or SIGTERM) stops the workers, the MCP server and the embedded
    Redis if ``up`` started it; a Redis that was already running is left
    running, and the banner says so.
    """
    import os
    import signal
    import subprocess

    from hindsight_redis.redis.connection import embedded_server, resolve
    from hindsight_redis.service.run import run_server

    if args.workers < 0:
        raise InvalidArgument("--workers must be 0 or more")
    check_port_free(args.host, args.port)

    server = embedded_server(settings.connection, settings.server) if settings.embedded else None
    started_here = server is not None and server.state() is None
    target = resolve(settings.connection, settings.server)
    if target.cluster:  # the local cluster of server_dir (or one configured): left running
        server = None
    # Pinned for the children: the same server and the profile in effect there.
    settings = settings.model_copy(update={"redis_url": target.url, "profile": target.profile.name})
    env = {**os.environ, **settings.to_env()}
    workers = [
        subprocess.Popen([sys.executable, "-m", "hindsight_redis.cli", "worker"], env=env)
        for _ in range(args.workers)
    ]
    if server is None:
        redis_note = f"Redis {redact_url(target.url)} (external, left running)"
    elif started_here:
        redis_note = f"embedded Redis {target.url} (started now, stopped with the rest)"
    else:
        redis_note = (
            f"embedded Redis {target.url} (was already running and stays up: "
            "`hindsight-redis server stop` stops it)"
        )
    print(
        f"{redis_note}; {args.workers} worker(s); MCP at http://{args.host}:{args.port}/mcp. "
        "Ctrl-C stops the workers and the MCP server.",
        file=sys.stderr,
    )
    # uvicorn re-raises a captured SIGTERM/SIGINT once it has shut down; turn it
    # into SystemExit so the cleanup below runs and no traceback is printed.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sys.exit(0))
    try:
        run_server(settings, "http", args.host, args.port, workers=0)
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
    from hindsight_redis.cli.demo import run_demo

    return asyncio.run(run_demo(settings, print))
