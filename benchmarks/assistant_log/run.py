"""Assistant-log retrieval: recall@k and "newest fact first" on a synthetic, seeded chat log.

A second retrieval benchmark beside LoCoMo (``data.py`` makes the data): several users'
multi-session assistant chats with filler, facts, changed facts and preferences,
restatements, and questions worded unlike the turns that answer them. Every turn is written
through ``AsyncMemoryClient.write_many`` as an agent records a chat line: content ``"User:
..."`` / ``"Assistant: ..."``, source = the turn id, session_id = the session, tags = the
user's partition (``partition:user-uNN``: one user's lines are never merged with another's)
and the session date, ``occurred_at`` = when the line was said; then a burst ``Worker`` runs
the real pipeline (filters on) and refines. Each question is asked with
``client.search(question, top_k=10, mode=..., tags=[partition])``.

recall@k: share of a question's evidence turns in its top k, averaged. Newest first (update
questions): the best-ranked evidence turn is in the top 10 and above every superseded turn
that is there. The vector and keyword modes are hybrid's baselines, on the same memories.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from benchmarks.assistant_log.data import AssistantLog, Question, generate
from benchmarks.assistant_log.topics import CATEGORIES, UPDATES
from benchmarks.harness import embedded_redis
from benchmarks.measure import MODES, percentile, ratio
from hindsight_redis import AsyncMemoryClient, Settings, Worker

SUMMARY = "recall@10 and newest-fact-first on a synthetic chat log with paraphrased questions"
Rows = dict[str, list[tuple[Question, dict[str, float]]]]  # mode -> (question, its scores)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="another seed, other data")
    parser.add_argument("--users", type=int, help="default 10 (quick: 3, about 650 turns)")
    parser.add_argument(
        "--contextual", default=Settings().contextual_embedder, help="none: without that leg"
    )
    parser.add_argument("--show-misses", choices=MODES, help="list the questions a mode missed")


def partition(user: str) -> str:
    """The tag that scopes one user's memories (and keeps them from merging across users)."""
    return f"partition:user-{user}"


def write_items(log: AssistantLog) -> list[dict[str, Any]]:
    """The ``write_many`` items of every turn."""
    return [
        {
            "content": turn.content,
            "source": turn.id,
            "session_id": turn.session,
            "tags": [partition(turn.user), f"date:{turn.day}"],
            "occurred_at": turn.at,  # when the line was said, not when it was stored
        }
        for turn in log.turns
    ]


async def ingest(settings: Settings, log: AssistantLog) -> tuple[dict[str, str], dict[str, int]]:
    """Write every turn, drain with a burst worker; memory id per turn id, worker counts."""
    items = write_items(log)
    ids: dict[str, str] = {}
    async with AsyncMemoryClient(settings) as client:
        for start in range(0, len(items), 500):
            chunk = items[start : start + 500]
            receipts = await client.write_many(chunk)
            ids.update((item["source"], r.id) for item, r in zip(chunk, receipts, strict=True))
    report = await Worker(settings).run_async(burst=True)
    return ids, {"indexed": report.indexed, "merged": report.merged, "dropped": report.dropped}


async def evidence_outcomes(
    settings: Settings, log: AssistantLog, ids: dict[str, str]
) -> tuple[Counter[str], int, int]:
    """What the pipeline did with each evidence and superseded turn (status, reason), and
    for how many update questions a turn of the new fact was flagged against an old one."""
    wanted = sorted({t for q in log.questions for t in q.evidence + q.superseded})
    evidence = {t for q in log.questions for t in q.evidence}
    outcomes: Counter[str] = Counter()
    conflicts: dict[str, tuple[str, ...]] = {}
    async with AsyncMemoryClient(settings) as client:
        for turn_id in wanted:
            record = await client.get(ids[turn_id])
            kind = "evidence" if turn_id in evidence else "superseded"
            if record is None:
                outcomes[f"{kind} missing"] += 1
                continue
            detail = f" ({record.reason})" if record.status != "active" and record.reason else ""
            outcomes[f"{kind} {record.status}{detail}"] += 1
            conflicts[turn_id] = record.conflicts_with + record.resolved_with
    updates = [q for q in log.questions if q.category in UPDATES]
    flagged = sum(
        any(ids[old] in conflicts.get(new, ()) for old in q.superseded for new in q.evidence)
        for q in updates
    )
    return outcomes, flagged, len(updates)


def score(question: Question, sources: list[str]) -> dict[str, float]:
    """recall@5, recall@10 and, for an update question, newest first (1 or 0)."""
    wanted = set(question.evidence)
    row = {
        "r5": len(wanted & set(sources[:5])) / len(wanted),
        "r10": len(wanted & set(sources[:10])) / len(wanted),
    }
    if question.category in UPDATES:
        ranks = {s: n for n, s in reversed(list(enumerate(sources)))}
        newest = min((ranks[t] for t in question.evidence if t in ranks), default=None)
        old = min((ranks[t] for t in question.superseded if t in ranks), default=None)
        row["newest"] = float(newest is not None and (old is None or newest < old))
        row["newest missing"] = float(newest is None)
    return row


async def ask_all(settings: Settings, log: AssistantLog) -> tuple[Rows, dict[str, list[float]]]:
    """Every question in every mode: scores per mode, search milliseconds per mode."""
    rows: Rows = {m: [] for m in MODES}
    times: dict[str, list[float]] = {m: [] for m in MODES}
    async with AsyncMemoryClient(settings) as client:
        await client.search("warm up", top_k=10, tags=[partition(log.questions[0].user)])
        for question in log.questions:
            for mode in MODES:
                started = time.perf_counter()
                hits = await client.search(
                    question.text,
                    top_k=10,
                    mode=mode,
                    tags=[partition(question.user)],
                )
                times[mode].append((time.perf_counter() - started) * 1000)
                rows[mode].append((question, score(question, [h.source for h in hits])))
    return rows, times


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _of_category(category: str) -> Callable[[Question], bool]:
    return lambda q: q.category == category


def summarize(rows: Rows, times: dict[str, list[float]]) -> dict[str, Any]:
    """Per mode: recall@5, @10, newest first and search p50 / p99 ms, overall and per group
    (each category, the paraphrased questions, those naming the event or relative)."""
    groups = [(c, _of_category(c)) for c in CATEGORIES]
    groups += [
        ("all, paraphrased", lambda q: q.paraphrased),
        ("all, naming the event or relative", lambda q: not q.paraphrased),
    ]
    out: dict[str, Any] = {}
    for mode in MODES:
        scored = [s for _, s in rows[mode]]
        updates = [s for s in scored if "newest" in s]
        out[mode] = {
            "r5": _mean([s["r5"] for s in scored]),
            "r10": _mean([s["r10"] for s in scored]),
            "newest_first": _mean([s["newest"] for s in updates]),
            "updates_newest_missing": sum(int(s["newest missing"]) for s in updates),
            "updates_below_an_old_turn": sum(
                1 for s in updates if not s["newest"] and not s["newest missing"]
            ),
            "p50_ms": percentile(times[mode], 50),
            "p99_ms": percentile(times[mode], 99),
            "groups": {},
        }
        for name, chosen in groups:
            mine = [s for q, s in rows[mode] if chosen(q)]
            out[mode]["groups"][name] = {
                "questions": len(mine),
                "r5": _mean([s["r5"] for s in mine]),
                "r10": _mean([s["r10"] for s in mine]),
                "newest_first": _mean([s["newest"] for s in mine if "newest" in s]),
            }
    return out


def report(modes: dict[str, Any]) -> None:
    """The markdown tables: per mode overall, then R@5 / R@10 and newest first per group."""
    print("| mode | R@5 | R@10 | newest first | search p50 / p99 ms |\n|---|---:|---:|---:|---:|")
    for mode, m in modes.items():
        print(
            f"| {mode} | {m['r5']:.3f} | {m['r10']:.3f} | {m['newest_first']:.3f} | "
            f"{m['p50_ms']:.1f} / {m['p99_ms']:.1f} |"
        )
    print(
        "\nUpdate questions not newest first: "
        + "; ".join(
            f"{mode} {m['updates_newest_missing']} not in the top 10, "
            f"{m['updates_below_an_old_turn']} below an old turn"
            for mode, m in modes.items()
        )
    )
    header = " | ".join(f"{m} R@5 / R@10" for m in MODES)
    newest = " | ".join(f"{m} newest first" for m in MODES)
    print(f"\n| group | questions | {header} | {newest} |\n|---|---:|" + "---:|" * 6)
    for name, group in modes["hybrid"]["groups"].items():
        cells = [
            f"{modes[m]['groups'][name]['r5']:.3f} / {modes[m]['groups'][name]['r10']:.3f}"
            for m in MODES
        ]
        firsts = [
            f"{modes[m]['groups'][name]['newest_first']:.3f}".replace("nan", "-") for m in MODES
        ]
        print(f"| {name} | {group['questions']} | " + " | ".join(cells + firsts) + " |")


def misses(rows: Rows, mode: str) -> list[str]:
    """The questions ``mode`` answered worst (no evidence in the top 10, or old first)."""
    return [
        f"{q.id} [{q.category}] {q.text} -> {q.answer}"
        for q, s in rows[mode]
        if s["r10"] == 0 or s.get("newest") == 0.0
    ]


async def measure(args: argparse.Namespace, url: str) -> dict[str, Any]:
    """Generate, ingest, ask; print the counts and the tables; the figures."""
    log = generate(args.seed, users=args.users)
    settings = Settings(
        redis_url=url,
        key_prefix=f"bench{uuid.uuid4().hex[:6]}",
        namespace="assistant-log",
        profile="ephemeral",
        agent_id="assistant",
        max_backlog=1_000_000,
        contextual_embedder=args.contextual,
    )
    by_category = Counter(q.category for q in log.questions)
    sessions = len({t.session for t in log.turns})
    print(
        f"seed {args.seed}: {args.users} users, {sessions} sessions, {len(log.turns)} turns, "
        f"{len(log.questions)} questions {dict(by_category)}"
    )
    started = time.perf_counter()
    ids, counts = await ingest(settings, log)
    print(f"written and drained in {time.perf_counter() - started:.1f} s: {counts}")
    outcomes, flagged, updates = await evidence_outcomes(settings, log, ids)
    print("evidence and superseded turns:", dict(sorted(outcomes.items())))
    print(f"update questions with the new fact flagged against the old: {flagged}/{updates}")
    rows, times = await ask_all(settings, log)
    modes = summarize(rows, times)
    print()
    report(modes)
    if args.show_misses:
        for line in misses(rows, args.show_misses):
            print(line)
    return {
        "turns": len(log.turns),
        "questions": len(log.questions),
        "ingest": counts,
        "evidence_outcomes": dict(outcomes),
        "updates_flagged": flagged,
        "updates": updates,
        "modes": modes,
        "hybrid_vs_keyword_r10": ratio(modes["hybrid"]["r10"], modes["keyword"]["r10"]),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.users = args.users or (3 if args.quick else 10)
    with embedded_redis() as url:
        return asyncio.run(measure(args, url))
