"""The command line explains itself: help on every argument, short errors, one --port."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from hindsight_redis.cli import build_parser


def _parsers(
    parser: argparse.ArgumentParser, path: str = "hindsight-redis"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_command_and_argument_has_help() -> None:
    missing = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                described = {a.dest for a in action._choices_actions if a.help}
                missing += [f"{path} {n}" for n in action.choices if n not in described]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_port_is_the_http_port_and_redis_port_the_embedded_servers() -> None:
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if "--port" in action.option_strings:
                assert path.split()[-1] in ("console", "mcp", "metrics", "up"), path
                assert action.dest == "port" and "HTTP port" in (action.help or "")
            if "--redis-port" in action.option_strings:
                assert action.dest == "server_port"
    parser = build_parser()
    assert parser.parse_args(["console", "--port", "9000"]).port == 9000
    assert parser.parse_args(["console", "--console-port", "9001"]).port == 9001  # the old name
    assert parser.parse_args(["up", "--mcp-port", "9002"]).port == 9002
    assert parser.parse_args(["write", "x", "--redis-port", "7000"]).server_port == 7000


@pytest.mark.parametrize(
    ("argv", "usage", "said"),
    [
        (["write"], "usage: hindsight-redis write content [options]", "required: content"),
        (["serve"], "usage: hindsight-redis COMMAND ... [options]", "unknown command 'serve'"),
        (
            ["--namespace", "x", "stats"],
            "usage: hindsight-redis COMMAND ... [options]",
            "unknown command 'x' (options go after the command",
        ),
        (
            ["server", "start", "--port", "7000"],
            "usage: hindsight-redis server {start,stop,status} [options]",
            "unrecognized arguments: --port 7000 (the embedded Redis's port is --redis-port",
        ),
        (
            ["token", "create", "--scope", "root"],
            "usage: hindsight-redis token create --agent-id TOKEN_AGENT [options]",
            "argument --scope: invalid choice: 'root'",
        ),
    ],
)
def test_a_usage_error_takes_three_lines(
    argv: list[str], usage: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from hindsight_redis.cli.app import main

    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err.splitlines()
    assert done.value.code == 2 and len(err) == 3, err
    assert err[0] == usage and err[1].startswith("error: ") and said in err[1]
    assert err[2].startswith("(`hindsight-redis") and "--help` says more)" in err[2]
