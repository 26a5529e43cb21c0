"""The filter layers on LoCoMo: what they drop, and how many turns cited as evidence survive.

Every dialogue turn of the LoCoMo dev conversations goes through the filter stages exactly as
a worker runs them (``build_filter_stages`` with no LLM: rules, heuristic write score,
extractive summary), in batches of ``worker_batch_size``, written as ``"Speaker: text"``.
Turns cited as evidence by a question (any category) should survive; chatter should not.
Targets: at least 15% of all turns dropped, at least 97% of the evidence turns kept.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from typing import Any

from benchmarks import locomo
from hindsight_redis import Settings
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.stages.filters import build_filter_stages

SUMMARY = "share of LoCoMo turns the filters drop, and of the cited (evidence) turns they keep"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: the whole dev file takes seconds (``--quick`` changes nothing)."""


def candidates() -> tuple[list[Candidate], set[str]]:
    """One candidate per dialogue turn, and the entry ids cited as evidence."""
    data = locomo.load()
    evidence = {
        f"{conv['sample_id']}/{e}"
        for conv in data
        for qa in conv["qa"]
        for e in qa.get("evidence", [])
    }
    out = []
    for turn in locomo.turns(data):
        entry_id = f"{turn.conversation}/{turn.dia_id}"
        event = MemoryEvent(
            event_id=entry_id,
            namespace=turn.conversation,
            content=turn.content,
            agent_id=turn.speaker,
            session_id=turn.conversation,
        )
        out.append(Candidate(entry_id=entry_id, event=event, content=turn.content))
    return out, evidence


async def measure() -> dict[str, Any]:
    settings = Settings(llm_model=None, filter_config=None, filters_enabled=True)
    stages = build_filter_stages(settings.filters, settings.llm)
    turns, evidence = candidates()
    for start in range(0, len(turns), settings.worker_batch_size):
        batch = turns[start : start + settings.worker_batch_size]
        for stage in stages:
            await stage.process(batch)
    reasons = Counter(c.drop_reason or "" for c in turns if c.dropped)
    cited = [c for c in turns if c.entry_id in evidence]
    lost = sorted((c for c in cited if c.dropped), key=lambda c: -(c.write_score or 0.0))
    dropped = sum(reasons.values())
    return {
        "turns": len(turns),
        "cited": len(cited),
        "dropped_by_reason": dict(reasons.most_common()),
        "dropped_share": dropped / len(turns),
        "evidence_kept_share": 1 - len(lost) / len(cited),
        "summarized": sum(1 for c in turns if c.original is not None),
        "highest_scored_evidence_dropped": [
            {
                "score": c.write_score,
                "why": c.drop_detail.split(": ", 1)[-1],
                "turn": c.entry_id,
                "text": c.content[:110],
            }
            for c in lost[:10]
        ],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures = asyncio.run(measure())
    print(f"- turns: {figures['turns']}, cited as evidence: {figures['cited']}")
    print("- dropped: " + ", ".join(f"{r} {n}" for r, n in figures["dropped_by_reason"].items()))
    print(f"- dropped in all: {figures['dropped_share']:.1%} (target >= 15%)")
    print(f"- evidence turns kept: {figures['evidence_kept_share']:.1%} (target >= 97%)")
    print(f"- summarized: {figures['summarized']}")
    print("\n| score | why | turn | text |\n|---|---|---|---|")
    for row in figures["highest_scored_evidence_dropped"]:
        text = row["text"].replace("|", "\\|")
        print(f"| {row['score'] or 0:.2f} | {row['why']} | {row['turn']} | {text} |")
    return figures
