"""The README's framework examples run as they are, in order, on the embedded server.

Each example block of the section is run as a script (``Settings`` reads the
test's server, prefix and embedder from the environment), after a burst
worker run; each must print the memory another adapter wrote into the same
namespace before it: one written through the LangChain tools first, and one the
PydanticAI example writes.

CrewAI's example runs where crewai is installed: in CI's second venv (``.ci/run``,
``HINDSIGHT_TEST_CREWAI=1``: there a missing crewai fails it); elsewhere it is skipped.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hindsight_redis import MemoryClient, Settings, Worker
from hindsight_redis.integrations.langchain import memory_tools

README = Path(__file__).resolve().parents[3] / "README.md"
SECTION = "## PydanticAI, OpenAI Agents, LlamaIndex, CrewAI"
NAMESPACE = "team-a"  # the examples'
SEED = "Alice prefers aisle seats on flights longer than three hours"
BOOKED = "Alice's Lisbon flight on 12 May is booked: seat 14C, an aisle seat"  # PydanticAI's


def examples() -> list[str]:
    """The Python blocks of the README's section on these frameworks, in order."""
    text = README.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def close_chat_stores(scope: dict[str, Any]) -> None:
    """Close the SQLite connection of each LlamaIndex ``Memory`` an example made: its chat
    store has no ``close`` and leaves it to the interpreter's exit (a ResourceWarning)."""
    for value in scope.values():
        engine = getattr(getattr(value, "sql_store", None), "_async_engine", None)
        if engine is not None:
            asyncio.run(engine.dispose())


def run_examples(blocks: list[str], settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    """Seed through LangChain's tools, then run the blocks in order, a worker before each:
    each prints the seed, and all but the first what the first (PydanticAI's) wrote."""
    settings = settings.model_copy(update={"namespace": NAMESPACE})
    with MemoryClient(settings.model_copy(update={"agent_id": "concierge"})) as client:
        tools = {t.name: t for t in memory_tools(client=client)}
        tools["memory_write"].invoke({"content": SEED, "task_type": "preference"})
    assert "pydantic_ai" in blocks[0]  # the one that writes BOOKED
    for n, code in enumerate(blocks):
        Worker(settings).run(burst=True)
        scope: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(code, str(README), "exec"), scope)
        close_chat_stores(scope)
        printed = capsys.readouterr().out
        assert SEED in printed, code
        assert n == 0 or BOOKED in printed, code


def test_the_examples_find_what_another_adapter_wrote(
    cli_env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the models stay unused
    blocks = examples()
    assert len(blocks) == 4 and "crewai" in blocks[3]
    run_examples(blocks[:3], cli_env, capsys)


# CrewAI's Agent reads its own deprecated fields while it is built (crewai 1.15).
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_crewai_example_finds_what_the_others_wrote(
    cli_env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.environ.get("HINDSIGHT_TEST_CREWAI") != "1":
        pytest.importorskip("crewai", reason="runs in CI's second venv (.ci/run)")
    importlib.import_module("crewai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    blocks = examples()
    run_examples([blocks[0], blocks[3]], cli_env, capsys)
