"""The package's shape: rooms by concern, imports pointing down the layers, no cycles.

The layers are written once, in the package docstring (``hindsight_redis/__init__.py``);
these tests read them from there and hold every import of the package to them,
imports under ``TYPE_CHECKING`` and inside functions included.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from fnmatch import fnmatch
from functools import cache
from pathlib import Path

import pytest

import hindsight_redis

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hindsight_redis"
NAME = "hindsight_redis"


@cache
def layers() -> list[list[str]]:
    """The rooms of each layer, lowest first, as the package docstring lists them."""
    doc = hindsight_redis.__doc__ or ""
    block = doc.split("Layers, lowest first", 1)[1].split("\n\n", 2)[1]
    found = []
    for line in filter(str.strip, block.splitlines()):
        rooms = line.strip().split("  ", 1)[0]
        found.append([r.strip() for r in rooms.split(",")])
    return found


def layer_of(module: str) -> int:
    """The index of the layer of a module (``hindsight_redis.core.keys`` -> core's)."""
    room = module.split(".")[1] if "." in module else ""
    for n, rooms in enumerate(layers()):
        if room in rooms:
            return n
    raise AssertionError(f"{module}: room {room!r} is in no layer of the package docstring")


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(path: Path) -> Iterator[str]:
    """The package's modules that the module at ``path`` imports, anywhere in its file."""
    modules = module_files()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import"
            base = node.module or ""
            names = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith(NAME):
                yield name


@cache
def graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (itself excluded)."""
    return {m: set(imported(p)) - {m} for m, p in module_files().items()}


def test_layers_are_listed_once_and_name_every_room() -> None:
    listed = [room for rooms in layers() for room in rooms]
    assert len(listed) == len(set(listed)), "a room is in two layers"
    rooms = {m.split(".")[1] for m in module_files() if "." in m}
    assert rooms == set(listed), "the docstring's layers and the package's rooms differ"


def test_imports_point_down_the_layers() -> None:
    upward = sorted(
        f"{m} -> {d}"
        for m, deps in graph().items()
        if m != NAME
        for d in deps
        if d == NAME or layer_of(d) > layer_of(m)
    )
    assert not upward


def test_adapters_import_nothing_of_each_other() -> None:
    top = layers()[-1]
    assert len(top) > 1, "the last layer holds the adapters"
    crossing = sorted(
        f"{m} -> {d}"
        for m, deps in graph().items()
        if m != NAME
        for d in deps
        if m.split(".")[1] in top and d.split(".")[1] in top and d.split(".")[1] != m.split(".")[1]
    )
    assert not crossing


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in edges.get(node, ()):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_type_only_imports_included() -> None:
    assert not _cycles(graph())


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_few_modules_at_the_top_and_rooms_below() -> None:
    top = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    rooms = [p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    assert len(top) <= 10, top
    assert len(rooms) >= 8


PURE_ROOMS = ("core", "language")
IO_MODULES = ("redis", "redisvl", "socket", "subprocess", "httpx", "litellm", "asyncio")


@pytest.mark.parametrize("room", PURE_ROOMS)
def test_pure_rooms_import_no_io(room: str) -> None:
    offenders = []
    for path in (PACKAGE / room).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in IO_MODULES]
    assert not offenders


def _python_files() -> list[Path]:
    roots = ("hindsight_redis", "tests", "benchmarks", "tools", "docs")
    found = (p for d in roots for p in (ROOT / d).rglob("*.py"))
    # Not ours: virtualenvs of the peer benchmarks (benchmarks/peers/.venv-*), caches.
    return [p for p in found if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]


def test_modules_keep_to_their_line_budget() -> None:
    """``loq.toml``: a default budget, and named exceptions (the last matching rule wins)."""
    config = tomllib.loads((ROOT / "loq.toml").read_text())
    over = []
    for path in _python_files():
        relative = path.relative_to(ROOT).as_posix()
        limit = config["default_max_lines"]
        for rule in config.get("rules", []):
            if fnmatch(relative, rule["path"]):
                limit = rule["max_lines"]
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            over.append(f"{relative}: {lines} lines (budget {limit})")
    assert not over


def test_no_module_is_over_600_lines_whatever_its_budget() -> None:
    assert not [p for p in _python_files() if len(p.read_text().splitlines()) > 600]


def test_formatting_is_rarely_skipped() -> None:
    skip = re.compile(r"#\s*fmt:\s*skip\s*$", re.MULTILINE)
    skips = sum(len(skip.findall(p.read_text())) for p in _python_files())
    assert skips <= 10


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
        and (
            any(m.startswith("redis.exceptions") for m in _plain_imports(p))
            or "except redis." in p.read_text()
        )
    ]
    assert not offenders


def _plain_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found
