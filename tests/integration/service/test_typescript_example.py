"""The TypeScript example (examples/typescript): built with its locked packages and run with
Node against a real HTTP MCP server and a bearer token. Skipped, saying so, without Node."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from hindsight_redis import Settings
from hindsight_redis.service.tokens import create_token
from tests.integration.service.test_mcp_tokens import _server

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "typescript"
FACT = "The TypeScript agent of team Orion builds with Node 20 and tsc 5.9"
QUESTION = "Which Node version does team Orion's TypeScript agent build with?"


def _run(
    args: list[str], cwd: Path, timeout: float, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example, its packages installed from the lockfile (``npm ci``), built."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js (node and npm) is not installed: the TypeScript example is not run")
    work = tmp_path_factory.mktemp("ts") / "example"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("node_modules", "dist"))
    for step in (["ci", "--no-audit", "--no-fund"], ["run", "build"]):
        done = _run([npm, *step], work, timeout=300)
        assert done.returncode == 0, f"npm {' '.join(step)}:\n{done.stdout}\n{done.stderr}"
    return work


def _steps(stdout: str) -> dict[str, Any]:
    return {s["step"]: s["value"] for s in map(json.loads, stdout.splitlines())}


async def test_typescript_agent_writes_searches_reads_and_recalls(
    example: Path, settings: Settings, redis: Redis, tmp_path: Path
) -> None:
    node = shutil.which("node")
    assert node is not None
    token, _ = await create_token(
        redis, settings.key_prefix, namespace=settings.namespace, agent_id="ts-agent"
    )
    async with _server(settings, tmp_path / "server.log") as url:
        done = _run(
            [node, "dist/agent.js", FACT, QUESTION],
            example,
            timeout=120,
            HINDSIGHT_MCP_URL=url,
            HINDSIGHT_TOKEN=token,
        )
        assert done.returncode == 0, done.stderr
        steps = _steps(done.stdout)
        refused = _run(
            [node, "dist/agent.js"],
            example,
            timeout=120,
            HINDSIGHT_MCP_URL=url,
            HINDSIGHT_TOKEN="hrt_000000000000_" + "A" * 43,
        )
    assert {"memory_write", "memory_search"} <= set(steps["tools"])
    assert "memory_review" not in steps["tools"]  # a write token is not offered admin tools
    written = steps["write"]
    assert written["status"] == "indexed"
    assert [h["id"] for h in steps["search"]][:1] == [written["id"]]
    memory = steps["resource"]
    assert (memory["id"], memory["content"], memory["agent_id"]) == (
        written["id"],
        FACT,
        "ts-agent",  # the token's agent, not anything the script says
    )
    assert memory["tags"] == ["lang:typescript"]
    assert FACT in steps["recall"] and written["id"] in steps["recall"]
    assert refused.returncode != 0 and "401" in refused.stderr, refused.stderr
    assert "step" not in refused.stdout  # it reached nothing
