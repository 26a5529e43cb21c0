"""The workers' secrets stage: first in every pipeline (filters or not), it masks, drops or
holds what a writer put on the stream past the client, and leaves held writes alone."""

from __future__ import annotations

import pytest

from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.pipeline.assembly import shared_parts
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.stages.secrets import SecretStage
from hindsight_redis.settings import Settings

TOKEN = "ghp_" + "Zq8vN3kLp0Xw7rTy" * 2 + "AbCd"


def _candidate(content: str, **fields: object) -> Candidate:
    event = MemoryEvent(event_id="e" + str(len(content)), namespace="n", content=content, **fields)
    return Candidate(entry_id="1-0", event=event, content=content)


async def test_mask_replaces_the_secret_everywhere_the_event_holds_it() -> None:
    found = _candidate(f"use {TOKEN}", source=f"ci?token={TOKEN}", tags=("ci",))
    clean = _candidate("the deploy window is Tuesday")
    await SecretStage("mask").process([found, clean])
    assert found.content == found.event.content == "use [secret:github-token]"
    assert TOKEN not in found.event.source and found.counters == ["secrets:masked"]
    assert found.alive and clean.event.content == "the deploy window is Tuesday"
    assert clean.counters == []


async def test_drop_masks_then_drops_with_reason_secret() -> None:
    found = _candidate(f"card 4111 1111 1111 1111 and {TOKEN}")
    await SecretStage("drop").process([found])
    assert found.drop_reason == "secret" and found.drop_detail == "card-number, github-token"
    assert TOKEN not in found.event.content  # the outcome keeps the event's content


async def test_hold_sets_the_verdict_and_keeps_the_write_as_written() -> None:
    found = _candidate(f"use {TOKEN}")
    held = _candidate(f"again {TOKEN}", hold="secret:github-token")
    await SecretStage("hold").process([found, held])
    assert found.event.hold == "secret:github-token" and TOKEN in found.content
    assert held.event.content == f"again {TOKEN}"
    masking = _candidate(f"more {TOKEN}", hold="poison:instruction")
    await SecretStage("mask").process([masking])  # held already: reviewed as written
    assert TOKEN in masking.content


@pytest.mark.parametrize("filters", [True, False])
def test_the_stage_comes_first_with_or_without_filters(filters: bool) -> None:
    settings = Settings(embedder="hash", filters_enabled=filters)
    stages = shared_parts(settings.embedding, settings.filters, settings.llm, settings.trust).stages
    assert stages[0].name == "secrets"
    keeping = Settings(embedder="hash", secrets="keep")
    stages = shared_parts(keeping.embedding, keeping.filters, keeping.llm, keeping.trust).stages
    assert "secrets" not in [s.name for s in stages]
