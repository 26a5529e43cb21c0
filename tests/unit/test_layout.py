"""The package's shape, as the README describes it: pure core, one home per concern."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hindsight_redis"
PURE = ("models", "keys", "text", "codec", "documents", "resp", "query", "ranking", "neighbours")
SEARCH_MODULES = ("hindsight_redis.searcher", "hindsight_redis.search", "hindsight_redis.client")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def _python_files() -> list[Path]:
    roots = ("hindsight_redis", "tests", "benchmarks")
    found = (p for d in roots for p in (ROOT / d).rglob("*.py"))
    # Not ours: virtualenvs of the peer benchmarks (benchmarks/peers/.venv-*), caches.
    return [p for p in found if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]


@pytest.mark.parametrize("module", PURE)
def test_pure_modules_import_no_redis_and_no_pipeline(module: str) -> None:
    imports = _imports(PACKAGE / f"{module}.py")
    assert not {i for i in imports if i == "redis" or i.startswith(("redis.", "redisvl"))}
    assert not {i for i in imports if i.startswith("hindsight_redis.pipeline")}


def test_the_pipeline_imports_no_search_module() -> None:
    for path in (PACKAGE / "pipeline").glob("*.py"):
        assert not _imports(path) & set(SEARCH_MODULES), path.name


def test_no_module_is_over_450_lines() -> None:
    long = {p.name: n for p in _python_files() if (n := len(p.read_text().splitlines())) > 450}
    assert not long


def test_lua_runs_only_through_the_script_wrapper() -> None:
    raw = re.compile(r"register_script\(|\.eval\(|\bevalsha\(|[\"']EVAL[\"' ]")
    offenders = [
        p.relative_to(ROOT).as_posix()
        for p in _python_files()
        if p.name not in ("lua.py", "test_layout.py")
        and p.parent.name != "scripts"
        and raw.search(p.read_text())
    ]
    assert not offenders


def test_redis_exceptions_are_caught_only_at_the_boundary() -> None:
    allowed = {"errors.py", "lua.py"}  # the mapping, and the NOSCRIPT reload
    offenders = [
        p.name
        for p in PACKAGE.rglob("*.py")
        if p.name not in allowed
        and ("redis.exceptions" in _imports(p) or "except redis." in p.read_text())
    ]
    assert not offenders
