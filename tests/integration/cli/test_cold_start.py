"""What a new user waits for: the query model is prepared by `server start`, not by a
first search, and importing the package loads none of the heavy dependencies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hindsight_redis.redis.server import free_port


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_server_start_prepares_the_query_model_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "HINDSIGHT_SERVER_DIR": str(tmp_path / "server"),
        "HINDSIGHT_SERVER_PORT": str(free_port()),
        "HINDSIGHT_PROFILE": "ephemeral",
        "HINDSIGHT_CACHE_DIR": str(cache),  # a brand-new user's cache
    }
    env.pop("HINDSIGHT_REDIS_URL", None)
    try:
        first = _cli(env, "server", "start")
        assert "preparing the search model" in first.stdout
        assert [p.suffix for p in cache.iterdir()] == [".onnx"]
        _cli(env, "server", "stop")
        again = _cli(env, "server", "start")
        assert "preparing the search model" not in again.stdout  # cached
    finally:
        subprocess.run(
            [sys.executable, "-m", "hindsight_redis.cli", "server", "stop"], env=env, timeout=60
        )


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    heavy = ("redis", "numpy", "redisvl", "pydantic", "litellm", "onnxruntime", "tokenizers")
    probe = (
        "import sys, hindsight_redis; "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules)); "
        "hindsight_redis.MemoryClient; hindsight_redis.Settings; "
        "print('redisvl' in sys.modules, 'litellm' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    # The names still resolve, on first use; redisvl and litellm wait for an index or a model.
    assert done.stdout.splitlines() == ["[]", "False False"]
