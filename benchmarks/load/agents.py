"""The agents of the load benchmark: what each writes and searches, and its log.

Each agent is a spawned process with its own client, one call at a time;
every receipt, search latency and error goes to ``<out_dir>/agent-<n>.jsonl``.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import locomo
from hindsight_redis import AsyncMemoryClient, Backpressure, Settings

CHITCHAT = [
    "ok thanks",
    "Thanks!",
    "sounds good",
    "👍",
    "lol",
    "got it",
    "sure, will do",
    "ok",
    "!!!",
    "np",
    "okay, thank you!",
    "hmm",
    "yes",
    "haha",
    "🙂🙂",
    "great, thanks",
]
SERVICES = ["billing-service", "auth-gateway", "search-api", "ingest-worker", "web-frontend"]
PEOPLE = ["alice", "bob", "carol", "dmitri", "mei", "priya", "tomas"]
NEAR = ["Noted again: {}", "{} (noting this again)", "Reminder: {}"]
TASKS = ["dialogue", "preference", "task", "report"]


@dataclass(frozen=True)
class Run:
    """What every agent process needs to know (pickled to spawned children)."""

    url: str
    key_prefix: str
    namespace: str
    agents: int
    seconds: float
    think_s: float
    seed_turns: int  # the last LoCoMo turns, written before the load; agents write the rest
    out_dir: str
    rng_seed: int
    contextual: str | None = None  # contextual_embedder; None: the default (MiniLM)
    settings: tuple[tuple[str, Any], ...] = ()  # more settings (name, value): the profile..


def settings_for(run: Run, **extra: Any) -> Settings:
    """Default settings on the run's Redis, prefix and namespace (and the run's own)."""
    extra = {**dict(run.settings), **extra}
    if run.contextual is not None:
        extra["contextual_embedder"] = run.contextual
    return Settings(redis_url=run.url, key_prefix=run.key_prefix, namespace=run.namespace, **extra)


def locomo_facts() -> list[str]:
    """LoCoMo's observations and session-summary sentences: what agents note down."""
    facts = []
    for sample in locomo.load():
        for session in sample["observation"].values():
            facts += [text for items in session.values() for text, *_ in items]
        for summary in sample["session_summary"].values():
            facts += [f"{x.strip()}." for x in summary.split(". ") if len(x.split()) >= 6]
    return facts


def locomo_questions() -> list[str]:
    """The LoCoMo dev questions of categories 1-4 (the searches' queries)."""
    return [
        qa["question"]
        for s in locomo.load()
        for qa in s["qa"]
        if qa.get("category") in locomo.CATEGORIES
    ]


# -- the agents -------------------------------------------------------------------


class Agent:
    """One agent: a client, a stream of contents, and a log of everything it got."""

    def __init__(self, run: Run, index: int, turns: list[str], questions: list[str]) -> None:
        self.run, self.index = run, index
        self.name = f"agent-{index}"
        self.rng = random.Random(run.rng_seed * 1000 + index)
        self.fresh = turns
        self.questions = questions
        self.written: list[str] = []  # contents written so far (repeats come from here)
        self.keyed: list[dict[str, Any]] = []  # keyed write items, for later retries
        self.seq = 0
        self.calls = 0  # client calls made (a batch is one)
        self.op = ""  # the call under way, for the error log
        self.sources: list[str] = []  # the sources of its writes (a failed call's may be stored)
        self.log = open(Path(run.out_dir) / f"{self.name}.jsonl", "w")  # noqa: SIM115
        self.client = AsyncMemoryClient(settings_for(run, agent_id=self.name))
        self.start = 0.0

    # contents

    def content(self) -> str:
        roll = self.rng.random()
        if roll < 0.12:
            return self.rng.choice(CHITCHAT)
        if roll < 0.22:
            return self.note()
        if roll < 0.34 and self.written:
            earlier = self.rng.choice(self.written)
            return earlier if roll < 0.28 else self.rng.choice(NEAR).format(earlier)
        if self.fresh:
            text = self.fresh.pop()
            self.written.append(text)
            return text
        return self.note()

    def note(self) -> str:
        r = self.rng
        svc, who = r.choice(SERVICES), r.choice(PEOPLE)
        return r.choice(
            [
                f"Deployed {svc} v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)} to "
                f"staging at {r.randint(0, 23):02d}:{r.randint(0, 59):02d}; "
                f"{r.randint(20, 900)} integration tests passed",
                f"{svc} error rate rose to {r.randint(2, 40)}% after the release; "
                f"rolled back to v{r.randint(1, 9)}.{r.randint(0, 30)}",
                f"Ticket OPS-{r.randint(1000, 9999)}: {who} traced the {svc} timeouts to a "
                f"connection pool of {r.randint(4, 64)} slots",
                f"User {who} prefers {r.choice(['short', 'detailed', 'bulleted'])} answers "
                f"and meetings after {r.randint(9, 16)}:00",
            ]
        )

    def item(self, keyed: bool) -> dict[str, Any]:
        self.seq += 1
        item: dict[str, Any] = {
            "content": self.content(),
            "session_id": f"{self.name}-s{self.seq // 25}",
            "task_type": self.rng.choice(TASKS),
            "source": f"{self.name}:{self.seq}",  # one per write: the audit's handle
            "tags": ["load", self.name],
        }
        if self.rng.random() < 0.05:
            item["visibility"] = "private"
        if keyed:
            item["idempotency_key"] = f"{self.name}-k{self.seq}"
            self.keyed.append(item)
        return item

    # logging

    def record(self, kind: str, **fields: Any) -> None:
        self.log.write(json.dumps({"k": kind, "t": time.time() - self.start, **fields}) + "\n")

    def receipts(self, op: str, items: list[dict[str, Any]], receipts: Iterable[Any]) -> None:
        for item, r in zip(items, receipts, strict=True):
            self.record(
                "r",
                op=op,
                id=r.id,
                sid=r.stream_id,
                dup=r.duplicate,
                status=r.status,
                reason=r.reason,
                key=item.get("idempotency_key"),
                src=item.get("source"),
                wait=bool(item.get("wait")),
            )

    # operations

    async def write_one(self, item: dict[str, Any], op: str) -> None:
        self.calls, self.op, self.sources = self.calls + 1, op, [item["source"]]
        receipt = await self.client.write(**item)
        self.receipts(op, [item], [receipt])

    async def write_batch(self, items: list[dict[str, Any]], op: str) -> None:
        self.calls, self.op = self.calls + 1, op
        self.sources = [item["source"] for item in items]
        self.receipts(op, items, await self.client.write_many(items))

    async def search(self) -> None:
        kwargs: dict[str, Any] = {"top_k": 5}
        if self.rng.random() < 0.2:
            kwargs["agent_id"] = f"agent-{self.rng.randrange(self.run.agents)}"
        query = self.rng.choice(self.questions)
        self.calls, self.op, self.sources = self.calls + 1, "search", []
        t0 = time.perf_counter()
        hits = await self.client.search(query, **kwargs)
        self.record("s", ms=(time.perf_counter() - t0) * 1000, n=len(hits))

    async def step(self) -> None:
        r = self.rng.random()
        if r < 0.35:
            await self.search()
        elif r < 0.60:
            await self.write_one(self.item(keyed=False), "write")
        elif r < 0.72:  # keyed; a third are retried at once (a lost reply)
            item = self.item(keyed=True)
            await self.write_one(item, "write_keyed")
            if self.rng.random() < 0.33:
                await self.write_one(item, "retry_now")
        elif r < 0.77:
            item = {**self.item(keyed=self.rng.random() < 0.5), "wait": True}
            await self.write_one(item, "write_wait")
        elif r < 0.82:  # every agent races on the same key for half a second
            slot = int((time.time() - self.start) * 2)
            item = {
                "content": f"Release checklist {slot}: the staging smoke test of build "
                f"{1000 + slot} passed on the first run",
                "source": f"shared:{slot}",
                "task_type": "report",
                "idempotency_key": f"shared-{slot}",
            }
            await self.write_one(item, "shared_key")
        elif r < 0.87 and self.keyed:  # a retry much later (after a timeout, a restart)
            await self.write_one(self.rng.choice(self.keyed), "retry_later")
        else:
            await self.batch()

    async def batch(self) -> None:
        size = self.rng.randint(2, 20)
        # A batch to be retried has a key on every item: without one, a retry is a
        # second write by design (the write path says so when it fails).
        retried = self.rng.random() < 0.15
        items = [self.item(keyed=retried or self.rng.random() < 0.5) for _ in range(size)]
        roll = self.rng.random()
        if roll < 0.1 and self.keyed:  # a key sent twice in one batch
            items.append(self.rng.choice(self.keyed))
        elif roll < 0.2:
            items[0] = {**items[0], "wait": True}
        await self.write_batch(items, "write_many")
        if retried:  # the whole batch again (its reply was lost)
            await self.write_batch(items, "retry_batch")

    async def loop(self, start: float, seconds: float) -> None:
        self.start = start
        deadline = start + seconds
        await asyncio.sleep(max(0.0, start - time.time()))
        cpu0 = time.process_time()
        while time.time() < deadline:
            try:
                await self.step()
            except Backpressure:
                self.record("b", op=self.op)
            except Exception as e:  # every error is counted by type, the run goes on
                error = {"type": type(e).__name__, "msg": str(e)[:300], "op": self.op}
                self.record("e", **error, srcs=self.sources)
            self.log.flush()
            pause = self.rng.expovariate(1 / self.run.think_s) if self.run.think_s else 0
            await asyncio.sleep(min(pause, max(0.0, deadline - time.time())))
        self.record("end", calls=self.calls, cpu_s=time.process_time() - cpu0)
        self.log.close()


def agent_main(
    run: Run, index: int, ready: Any, go: Any, start: Any, kind: type[Agent] | None = None
) -> None:
    """A spawned agent process: warm up, report ready, wait for the start, loop (as an
    ``Agent``, or the ``kind`` given: the soak's)."""
    texts = locomo.texts()
    turns = texts[: len(texts) - run.seed_turns]
    mine = turns[index :: run.agents] + locomo_facts()[index :: run.agents]
    random.Random(index).shuffle(mine)

    async def main() -> None:
        agent = (kind or Agent)(run, index, mine, locomo_questions())
        async with agent.client:
            await agent.client.search("warm-up: load the models", top_k=1)
            ready.put(index)
            await asyncio.to_thread(go.wait)
            await agent.loop(start.value, run.seconds)

    asyncio.run(main())


def read_logs(out_dir: Path) -> list[dict[str, Any]]:
    lines = []
    for path in sorted(out_dir.glob("agent-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                lines.append({**json.loads(line), "agent": path.stem})
            except json.JSONDecodeError:  # a killed agent's last, half-written line
                lines.append({"k": "e", "t": 0, "type": "TruncatedLog", "msg": path.name})
    return lines
