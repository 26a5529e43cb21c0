"""The tools a framework hands a model: which, and how a refused call reads (no Redis)."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_redis.errors import InvalidArgument
from hindsight_redis.service.model_tools import (
    ToolCallError,
    call_tool,
    model_principal,
    offered_tools,
)
from hindsight_redis.service.tokens import Principal
from hindsight_redis.service.tools import TOOLS

NO_CLIENT: Any = None  # the calls below are refused before any client is used


def test_a_model_is_offered_every_tool_but_the_admin_ones_in_order() -> None:
    model = model_principal("ns", "agent")
    assert model == Principal("ns", "agent", "write")
    assert [s.name for s in offered_tools(model)] == [s.name for s in TOOLS if s.scope != "admin"]
    chosen = offered_tools(model, ["memory_search", "memory_write"])
    assert [s.name for s in chosen] == ["memory_write", "memory_search"]  # TOOLS' order
    with pytest.raises(InvalidArgument, match=r"unknown tool\(s\): nope; admin .*: memory_erase"):
        offered_tools(model, ["nope", "memory_erase"])


async def test_refused_calls_say_why_and_whether_to_retry() -> None:
    spec = {s.name: s for s in TOOLS}
    model = model_principal("ns", "agent")
    with pytest.raises(ToolCallError, match=r"PermissionDenied \(not retryable\)") as denied:
        await call_tool(spec["memory_erase"], NO_CLIENT, model, {"ids": ["m1"]})
    assert not denied.value.retryable
    with pytest.raises(ToolCallError, match=r"InvalidArgument \(retryable") as invalid:
        await call_tool(spec["memory_get"], NO_CLIENT, model, {})
    assert invalid.value.retryable and "memory_id" in str(invalid.value)
