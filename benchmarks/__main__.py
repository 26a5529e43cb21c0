"""Run one benchmark of the suite and write its result.

    python -m benchmarks --list                 # the benchmarks, one line each
    python -m benchmarks NAME [--quick] [...]   # run one; NAME --help for its options

Each run prints its tables and writes ``benchmarks/results/NAME.json`` (figures, command,
git commit, machine, load average before and after, start time, duration). ``--quick``
runs small sizes: a check that the benchmark works, not figures to quote.
"""

from __future__ import annotations

import argparse
import importlib
import os
from typing import Any, Protocol, cast

from benchmarks import SUITE
from benchmarks.measure import started, write_result


class Benchmark(Protocol):
    """What a member of the suite provides."""

    SUMMARY: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> dict[str, Any]: ...


def benchmark(name: str) -> Benchmark:
    """The module of the benchmark ``name``."""
    return cast(Benchmark, importlib.import_module(SUITE[name]))


def parser() -> argparse.ArgumentParser:
    """The command line: ``--list``, or a benchmark's name and its options."""
    top = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=(__doc__ or "").split("\n\n")[0],
    )
    top.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    names = top.add_subparsers(dest="name", metavar="NAME")
    for name in SUITE:
        module = benchmark(name)
        sub = names.add_parser(
            name,
            help=module.SUMMARY,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument(
            "--quick", action="store_true", help="small sizes: checks that it runs (seconds)"
        )
        module.add_arguments(sub)
    return top


def main() -> None:
    """Parse the command line; list the suite or run one benchmark."""
    # Before the benchmarks import the package (litellm reads the first when imported).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = parser().parse_args()
    if args.list or args.name is None:
        width = max(map(len, SUITE))
        for name in SUITE:
            print(f"{name:<{width}}  {benchmark(name).SUMMARY}")
        return
    # The process is ours, as the CLI's: in-process workers run as a CLI worker does.
    from hindsight_redis.providers.priority import one_blas_thread

    one_blas_thread()
    start = started()
    figures = benchmark(args.name).run(args)
    print(f"\nwrote {write_result(args.name, figures, args, start)}")


if __name__ == "__main__":
    main()
