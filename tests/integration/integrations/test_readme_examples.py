"""The README's framework examples run as they are, in order, on the embedded server.

Each example block of the section is run as a script (``Settings`` reads the
test's server, prefix and embedder from the environment), after a burst
worker run; each must print the memory another adapter wrote into the same
namespace before it: one written through the LangChain tools first, and one the
PydanticAI example writes.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from hindsight_redis import MemoryClient, Settings, Worker
from hindsight_redis.integrations.langchain import memory_tools

README = Path(__file__).resolve().parents[3] / "README.md"
SECTION = "## PydanticAI, OpenAI Agents, LlamaIndex"
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


def test_the_examples_find_what_another_adapter_wrote(
    cli_env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the models stay unused
    settings = cli_env.model_copy(update={"namespace": NAMESPACE})
    with MemoryClient(settings.model_copy(update={"agent_id": "concierge"})) as client:
        tools = {t.name: t for t in memory_tools(client=client)}
        tools["memory_write"].invoke({"content": SEED, "task_type": "preference"})
    blocks = examples()
    assert len(blocks) == 3 and "pydantic_ai" in blocks[0]  # the one that writes BOOKED
    for n, code in enumerate(blocks):
        Worker(settings).run(burst=True)
        scope: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(code, str(README), "exec"), scope)
        close_chat_stores(scope)
        printed = capsys.readouterr().out
        assert SEED in printed, code
        assert n == 0 or BOOKED in printed, code
