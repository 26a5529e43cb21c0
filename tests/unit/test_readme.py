"""The README stays true: its configuration table lists every setting."""

from __future__ import annotations

import re
from pathlib import Path

from hindsight_redis.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_documents_every_setting() -> None:
    text = README.read_text().split("## Configuration", 1)[1]
    documented = set(re.findall(r"^\| `([a-z0-9_]+)` \|", text, flags=re.MULTILINE))
    assert documented == set(Settings.model_fields)


def test_readme_starts_with_the_two_fresh_machine_commands() -> None:
    lines = README.read_text().splitlines()
    block = "\n".join(lines[:6])
    assert "pip install . && hindsight-redis demo" in block
    assert "python -m pytest -q" in block
