"""The argument parser's errors, for people.

An error names the command's usage in one line (its positionals and required
options, ``[options]`` for the rest), the problem, and where the full help is:
three lines, not the whole usage of every option.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

# Spellings that changed: an old one gets a hint instead of a bare "unrecognized".
RENAMED = {
    "--port": "the embedded Redis's port is --redis-port; --port is the HTTP port of "
    "console, mcp, metrics and up"
}


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors take three lines (see the module)."""

    argv: Sequence[str] = ()  # what ``parse`` was given, for hints

    def error(self, message: str) -> NoReturn:
        """Print the short usage, the problem and where help is; exit 2."""
        choice = re.match(r"argument COMMAND: invalid choice: ('[^']*')", message)
        if choice:
            given = choice.group(1)[1:-1]
            message = f"unknown command {choice.group(1)}"
            before = self.argv[: self.argv.index(given)] if given in self.argv else []
            if any(word.startswith("-") for word in before):
                message += " (options go after the command: hindsight-redis COMMAND --option ...)"
        for old, hint in RENAMED.items():
            if "unrecognized arguments" in message and re.search(rf"(^|\s){old}(\s|=|$)", message):
                message += f" ({hint})"
        self.exit(2, f"{self.short_usage()}\nerror: {message}\n(`{self.prog} --help` says more)\n")

    def short_usage(self) -> str:
        """``usage: PROG POSITIONALS --required X [options]`` on one line."""
        shown = [a for a in self._actions if not a.option_strings or a.required]
        formatter = argparse.HelpFormatter(self.prog, width=10_000)
        formatter.add_usage(None, shown, [])
        usage = " ".join(formatter.format_help().split())
        optional = any(a.option_strings and not a.required for a in self._actions)
        return f"{usage} [options]" if optional else usage


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with unknown arguments reported by the (sub)command
    they were given to, with its usage, not the top level's."""
    if isinstance(parser, Parser):
        parser.argv = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        target = parser
        while (chosen := _chosen_subcommand(target, args)) is not None:
            target = chosen
        target.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _chosen_subcommand(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser | None = action.choices.get(getattr(args, action.dest))
            return found
    return None
