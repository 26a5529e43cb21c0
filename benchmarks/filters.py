"""Measure the filter layers on LoCoMo: what is dropped, and which evidence survives.

Every dialogue turn of the LoCoMo dev conversations goes through the filter
stages exactly as a worker runs them (``build_filter_stages`` with no LLM:
rules, heuristic score, extractive summary), in worker-sized batches. Turns
cited as evidence by a question should survive; chatter should not.

    python benchmarks/filters.py [path/to/locomo_dev.json]
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

from hindsight_redis.models import MemoryEvent
from hindsight_redis.pipeline.base import Candidate
from hindsight_redis.pipeline.filters import build_filter_stages
from hindsight_redis.settings import Settings

DATA = Path("/work/shared/data/locomo/locomo_dev.json")


def load_turns(path: Path) -> tuple[list[Candidate], set[str]]:
    """One candidate per dialogue turn, and the entry ids cited as evidence."""
    candidates: list[Candidate] = []
    evidence: set[str] = set()
    for conversation in json.loads(path.read_text("utf-8")):
        sample = conversation["sample_id"]
        for qa in conversation["qa"]:
            evidence.update(f"{sample}/{e}" for e in qa.get("evidence", []))
        for key, turns in conversation["conversation"].items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            for turn in turns:
                entry_id = f"{sample}/{turn['dia_id']}"
                # As an agent would write a transcript line (and as the recall
                # benchmark does): the speaker's name, then what was said.
                content = f"{turn['speaker']}: {turn['text']}"
                event = MemoryEvent(
                    event_id=entry_id,
                    namespace=sample,
                    content=content,
                    agent_id=turn["speaker"],
                    session_id=f"{sample}/{key}",
                )
                candidates.append(Candidate(entry_id=entry_id, event=event, content=content))
    return candidates, evidence


async def run(path: Path) -> str:
    """Run the stages over every turn and return the report as Markdown."""
    settings = Settings(llm_model=None, filter_config=None, filters_enabled=True)
    stages = build_filter_stages(settings.filters, settings.llm)
    candidates, evidence = load_turns(path)
    size = settings.worker_batch_size
    for start in range(0, len(candidates), size):
        batch = candidates[start : start + size]
        for stage in stages:
            await stage.process(batch)
    total = len(candidates)
    reasons = Counter(c.drop_reason for c in candidates if c.dropped)
    by_rules = sum(n for r, n in reasons.items() if r and r.startswith("rule:"))
    by_score = reasons.get("score:low", 0)
    cited = [c for c in candidates if c.entry_id in evidence]
    kept = [c for c in cited if c.alive]
    lost = sorted((c for c in cited if c.dropped), key=lambda c: -(c.write_score or 0.0))
    summarized = sum(1 for c in candidates if c.original is not None)
    lines = [
        f"- turns: {total}, cited as evidence: {len(cited)}",
        f"- dropped by rules: {by_rules} ({by_rules / total:.1%}) "
        + ", ".join(f"{r}={n}" for r, n in sorted(reasons.items()) if r and r.startswith("rule:")),
        f"- dropped by the heuristic scorer (score:low, min_score {settings.min_score}): "
        f"{by_score} ({by_score / total:.1%})",
        f"- dropped in all: {by_rules + by_score} ({(by_rules + by_score) / total:.1%})",
        f"- evidence turns kept: {len(kept)}/{len(cited)} ({len(kept) / len(cited):.1%})",
        f"- summarized (over {settings.summary_token_budget} tokens): {summarized}",
        "",
        "Highest-scored dropped evidence turns:",
        "",
        "| score | reason | turn | text |",
        "|---|---|---|---|",
    ]
    for c in lost[:10]:
        score = "-" if c.write_score is None else f"{c.write_score:.2f}"
        text = c.content.replace("|", "\\|")[:110]
        lines.append(f"| {score} | {c.drop_detail.split(': ', 1)[-1]} | {c.entry_id} | {text} |")
    return "\n".join(lines)


def main() -> None:
    """Print the report for the data file given (or the shared LoCoMo dev set)."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA
    print(asyncio.run(run(path)))


if __name__ == "__main__":
    main()
