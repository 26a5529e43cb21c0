"""compose/: a file Compose v1 (1.29, offline `config`) accepts, whose commands our CLI parses."""

from __future__ import annotations

from pathlib import Path

import yaml

from hindsight_redis.cli.app import build_parser

COMPOSE = Path(__file__).resolve().parents[2] / "compose" / "docker-compose.yml"


def test_compose_file_has_no_v2_only_keys_and_its_commands_parse() -> None:
    spec = yaml.safe_load(COMPOSE.read_text())
    assert "name" not in spec  # docker-compose 1.29 rejects the top-level name: key
    ours = {n: s for n, s in spec["services"].items() if s.get("image", "").startswith("hindsight")}
    assert {"worker", "mcp"} <= set(ours)
    parser = build_parser()
    for name, service in ours.items():
        args = parser.parse_args(service["command"])  # exits (fails) on an unknown flag
        assert args.command == service["command"][0], name
    mcp = parser.parse_args(ours["mcp"]["command"])
    assert mcp.workers == 0  # the worker service indexes; no second worker inside mcp
