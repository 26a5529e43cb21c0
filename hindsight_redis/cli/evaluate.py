"""``eval FILE`` / ``eval --self N``: how well search finds the user's own memories."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hindsight_redis.cli.common import print_json, with_client
from hindsight_redis.errors import InvalidArgument
from hindsight_redis.settings import Settings

if TYPE_CHECKING:
    from hindsight_redis.ops.evaluate import EvalReport, Metrics

FAILED = 1
"""The exit code when a ``--fail-under`` threshold is not met (2 is a user's mistake)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``eval``."""
    p.add_argument(
        "file", nargs="?", help="a golden file: JSON Lines, one question a line (see README)"
    )
    p.add_argument(
        "--self",
        dest="sample",
        type=int,
        metavar="N",
        help="instead: sample N memories, query each by its rarest words (or the LLM), "
        "and count how many search finds (no labels needed)",
    )
    p.add_argument("--k", type=int, default=10, help="hits per search scored (default 10)")
    p.add_argument(
        "--mode",
        choices=["hybrid", "vector", "keyword"],
        default="hybrid",
        help="the search mode (default hybrid)",
    )
    p.add_argument(
        "--fail-under",
        dest="fail_under",
        metavar="METRIC=V,...",
        help="exit 1 when a metric is below its value, e.g. recall=0.7,mrr=0.5 "
        "(recall, hit, mrr, ndcg)",
    )
    p.add_argument(
        "--compare", metavar="REPORT.json", help="print each metric's change since this report"
    )
    p.add_argument("--seed", type=int, help="--self: the sample's random seed")
    p.add_argument("--show", type=int, default=20, help="questions not found shown (0: all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    """``eval FILE`` / ``eval --self N``: the report; exit 1 under a ``--fail-under``."""
    from hindsight_redis.ops.evaluate import (
        below,
        check_run,
        compare,
        parse_thresholds,
        read_golden,
        read_report,
    )

    if (args.file is None) == (args.sample is None):
        raise InvalidArgument("eval takes a golden FILE or --self N (one of them)")
    check_run(args.k, args.mode)
    thresholds = parse_thresholds(args.fail_under) if args.fail_under is not None else {}
    before = read_report(args.compare) if args.compare is not None else None
    golden = read_golden(args.file) if args.file is not None else None  # errors before Redis
    report = asyncio.run(
        with_client(
            settings,
            lambda c: c.evaluate(
                golden, sample=args.sample, k=args.k, mode=args.mode, seed=args.seed
            ),
        )
    )
    changes = compare(before, report) if before is not None else []
    if args.json:
        value: dict[str, Any] = report.as_dict()
        if changes:
            value["compared_with"] = {
                name: {"before": old, "now": new, "change": new - old} for name, old, new in changes
            }
        print_json(value)
    else:
        from hindsight_redis.ops.layout import screen_width

        width = screen_width()
        title = (
            f"{args.file}: {report.overall.questions} questions"
            if args.file is not None
            else f"self-check: {report.overall.questions} sampled memories"
        )
        print(f"{title}, {report.mode} search, k={report.k}")
        print("\n".join(report_lines(report, show=args.show, width=width)))
        if changes:
            print("\n" + "\n".join(change_lines(changes, args.compare)))
    failed = below(report.overall, thresholds)
    for line in failed:
        print(f"below --fail-under: {line}", file=sys.stderr)
    return FAILED if failed else 0


def report_lines(report: EvalReport, *, show: int = 20, width: int | None = None) -> list[str]:
    """The metrics (overall, then per tag), the latency and the questions not found."""
    from hindsight_redis.ops.layout import Column, table

    k = report.k
    found = "self-hit" if report.kind == "self" else "recall"
    columns = [
        Column(""),
        Column("questions", right=True),
        Column(f"{found}@{k}", right=True),
        Column(f"hit@{k}", right=True),
        Column("MRR", right=True),
    ]
    rows = [_metrics_row("all", report.overall)]
    rows += [_metrics_row(f"tag {tag}", m) for tag, m in report.by_tag.items()]
    lines = table(columns, f"nDCG@{k}", rows, width=width)
    lines.append(f"search p50 / p99: {report.p50_ms:.1f} / {report.p99_ms:.1f} ms")
    lines += report.notes
    if report.missed:
        shown = report.missed if show <= 0 else report.missed[:show]
        what = "memories not found" if report.kind == "self" else "questions that found nothing"
        lines += ["", f"{what} in the top {k} ({len(report.missed)}):"]
        missed: list[tuple[str, ...]]
        if report.kind == "self":
            cols, title = [Column("memory")], "query"
            missed = [(m.relevant[0], m.query) for m in shown]
        else:
            cols, title = [Column("line", right=True), Column("relevant", cap=30)], "query"
            missed = [(str(m.line), ", ".join(m.relevant), m.query) for m in shown]
        lines += table(cols, title, missed, width=width)
        if len(shown) < len(report.missed):
            lines.append(f"... {len(report.missed) - len(shown)} more (--show 0: all)")
    return lines


def _metrics_row(name: str, m: Metrics) -> tuple[str, ...]:
    cells = (m.recall, m.hit, m.mrr, m.ndcg)
    return (name, str(m.questions), *(f"{value:.3f}" for value in cells))


def change_lines(changes: Sequence[tuple[str, float, float]], against: str) -> list[str]:
    """Each metric before (the report ``against``), now and the change."""
    lines = [f"since {against}:"]
    for name, old, new in changes:
        digits = 1 if name.endswith("_ms") else 3
        lines.append(f"  {name:<7} {old:.{digits}f} -> {new:.{digits}f}  ({new - old:+.{digits}f})")
    return lines
