"""The LoCoMo protocol shared by every adapter of the peer benchmark (standard library only).

Each adapter runs in its own venv, as a script, so this module imports nothing but the
standard library and ``benchmarks.locomo`` / ``benchmarks.measure`` (the suite's own
definitions, standard library only too; the repository goes on ``sys.path`` for them):

- one memory per dialogue turn, content ``"Speaker: text"``, keyed by its ``dia_id``; each
  conversation is its own scope (namespace / user);
- the questions of categories 1-4 that cite evidence, each searched in its own conversation
  only, top 10;
- recall@k: the share of the cited turns (``evidence``) in the top k, averaged over
  questions; hit@10: the share of questions with at least one cited turn in the top 10;
- writes: one call per turn, sequential, one client; writes/s = turns / (first call -> last
  acknowledgement); searchable_after_s: last acknowledgement -> every written turn
  searchable (an adapter's own check, polled every 10 ms); searches sequential, client wall
  time.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the adapters run as scripts

from benchmarks import locomo
from benchmarks.locomo import Question, Turn
from benchmarks.measure import percentile

TOP_K = 10


@dataclass
class Conversation:
    id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def load(limit: int | None = None) -> list[Conversation]:
    """The first ``limit`` conversations (all when None): turns and questions."""
    data = locomo.load()[:limit]
    convs = {conv["sample_id"]: Conversation(conv["sample_id"]) for conv in data}
    for turn in locomo.turns(data):
        convs[turn.conversation].turns.append(turn)
    for question in locomo.questions(data):
        convs[question.conversation].questions.append(question)
    return list(convs.values())


def spawn(command: list[str], log_path: str | Path, **kwargs: Any) -> subprocess.Popen[Any]:
    """Start ``command`` with its stderr to ``log_path`` (the parent closes its copy)."""
    with open(log_path, "w") as err:
        return subprocess.Popen(command, stderr=err, **kwargs)


def log(*parts: Any) -> None:
    """Progress to stderr (stdout carries the result JSON)."""
    print(*parts, file=sys.stderr, flush=True)


WriteFn = Callable[[Conversation, Turn], Awaitable[None]]
SearchFn = Callable[[Conversation, str], Awaitable[list[str]]]
CheckFn = Callable[[], Awaitable[bool]]


async def write_all(convs: list[Conversation], write: WriteFn) -> dict[str, float]:
    """One call per turn, in order; time from the first call to the last acknowledgement."""
    n = 0
    started = time.perf_counter()
    for conv in convs:
        for turn in conv.turns:
            await write(conv, turn)
            n += 1
        took = time.perf_counter() - started
        log(f"  {conv.id}: {len(conv.turns)} turns acknowledged ({took:.1f} s)")
    elapsed = time.perf_counter() - started
    return {"turns_written": n, "write_s": elapsed, "writes_per_s": n / elapsed}


async def wait_until(check: CheckFn, timeout_s: float = 1800.0, every_s: float = 0.01) -> float:
    """Seconds until ``check()`` is true (polled), from now; raises after ``timeout_s``."""
    started = time.perf_counter()
    while not await check():
        if time.perf_counter() - started > timeout_s:
            raise TimeoutError(f"not searchable after {timeout_s:.0f} s")
        await asyncio.sleep(every_s)
    return time.perf_counter() - started


async def ask_all(convs: list[Conversation], search: SearchFn) -> dict[str, Any]:
    """Every question in its own conversation, sequentially: recall, hit and latency."""
    await search(convs[0], "warm up: what did they talk about?")  # not counted
    r5: list[float] = []
    r10: list[float] = []
    hits: list[float] = []
    per_category: dict[int, list[float]] = {}
    latencies: list[float] = []
    for conv in convs:
        for q in conv.questions:
            started = time.perf_counter()
            ranked = await search(conv, q.text)
            latencies.append((time.perf_counter() - started) * 1000)
            top = ranked[:TOP_K]
            found = q.evidence & set(top)
            r5.append(len(q.evidence & set(top[:5])) / len(q.evidence))
            r10.append(len(found) / len(q.evidence))
            hits.append(1.0 if found else 0.0)
            per_category.setdefault(q.category, []).append(r10[-1])
    return {
        "questions": len(r10),
        "recall@5": sum(r5) / len(r5),
        "recall@10": sum(r10) / len(r10),
        "hit@10": sum(hits) / len(hits),
        "recall@10_by_category": {str(k): sum(v) / len(v) for k, v in sorted(per_category.items())},
        "search_p50_ms": percentile(latencies, 50),
        "search_p99_ms": percentile(latencies, 99),
        "search_mean_ms": sum(latencies) / len(latencies),
    }


def emit(result: dict[str, Any]) -> None:
    """The result as one JSON line on stdout (the orchestrator reads the last line)."""
    print(json.dumps(result), flush=True)
