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


def test_the_configuration_table_is_grouped_as_the_settings_are() -> None:
    from hindsight_redis.settings import GROUPS

    text = README.read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    sections = re.split(r"^\*\*(\w+)\*\* \(`settings\.\w+`\)", text, flags=re.MULTILINE)[1:]
    shown = {
        title: set(re.findall(r"^\| `([a-z0-9_]+)` \|", body, flags=re.MULTILINE))
        for title, body in zip(sections[::2], sections[1::2], strict=True)
    }
    assert shown == {g.__name__.removesuffix("Settings"): set(g.model_fields) for g in GROUPS}
