"""The audit of the load benchmark: every accepted write against what Redis holds."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from hindsight_redis import AsyncMemoryClient
from hindsight_redis.core.keys import Keys


@dataclass
class Audit:
    """What the audit found; ``lost`` and ``duplicated`` must be empty.

    Lost: an accepted write (an id some receipt carries) that is neither a
    stored memory, nor merged, nor dropped with a reason, nor a dead letter.
    Duplicated: one id appended as two stream entries; an idempotency key
    answered with two ids, two stream ids or two first receipts; more stream
    entries than writes (beyond write calls that failed); a write both stored
    and merged or dropped; a stored memory no write got the id of; one
    write's ``source`` (unique per write, shared by its retries) in two
    stored memories. ``twins`` is not duplication: separate writes of the
    same text both kept (two workers embedding them at once cannot see each
    other's uncommitted write).
    """

    outcomes: Counter[str] = field(default_factory=Counter)  # per accepted write id
    reasons: Counter[str] = field(default_factory=Counter)
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    dead_lettered: list[str] = field(default_factory=list)
    wait_mismatch: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lags_s: list[float] = field(default_factory=list)
    twins: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    status_of: dict[str, str] = field(default_factory=dict)


async def audit(
    client: AsyncMemoryClient,
    receipts: list[dict[str, Any]],
    load_ids: set[str],
    write_errors: int = 0,
) -> Audit:
    """Check every accepted write against Redis: one outcome each, no memory twice.

    ``write_errors``: write calls that raised; each may have been appended without
    its receipt (a ``wait=True`` timeout), so as many stream entries may lack one.
    """
    found = Audit()
    redis, keys = client.redis, client.keys
    by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in receipts:
        by_id[r["id"]].append(r)
        if r["key"] is not None:
            by_key[r["key"]].append(r)
    check_receipts(found, by_id, by_key)
    stats = await client.stats()
    found.counters = stats["counters"]
    if stats["accepted"] != len(by_id):
        # More stream entries than distinct writes: one write appended twice,
        # unless a write call failed after its append.
        extra = stats["accepted"] - len(by_id)
        found.notes.append(
            f"stream entries {stats['accepted']} vs distinct writes {len(by_id)} "
            f"({write_errors} write calls failed)"
        )
        if extra > write_errors:
            found.duplicated += [f"stream: {extra - write_errors} entries without a write"]
    dlq = {d.memory_id for d in await client.dead_letters(10_000)}
    ids = list(by_id)
    docs, outcomes = await read_state(redis, keys, ids)
    for memory_id, doc, outcome in zip(ids, docs, outcomes, strict=True):
        classify(found, memory_id, doc, outcome, memory_id in dlq, memory_id in load_ids)
    for memory_id, doc in zip(ids, docs, strict=True):
        if memory_id in load_ids and doc[3] and doc[4]:
            found.lags_s.append(float(doc[4]) - float(doc[3]))
    for memory_id, rs in by_id.items():
        final = found.status_of.get(memory_id)
        for r in rs:
            if r["wait"] and r["status"] != final:
                found.wait_mismatch.append(f"{memory_id}: wait said {r['status']}, now {final}")
    await check_hashes(found, redis, keys, set(by_id))
    await spot_check_get(found, client, ids)
    return found


def check_receipts(
    found: Audit,
    by_id: dict[str, list[dict[str, Any]]],
    by_key: dict[str, list[dict[str, Any]]],
) -> None:
    """An id appended twice, or a key that gave two ids or two appends, is a duplicate."""
    for memory_id, rs in by_id.items():
        appends = {r["sid"] for r in rs if not r["dup"]}
        if len(appends) > 1:
            found.duplicated.append(f"{memory_id}: appended as {sorted(appends)}")
    for key, rs in by_key.items():
        ids = {r["id"] for r in rs}
        sids = {r["sid"] for r in rs}
        firsts = sum(1 for r in rs if not r["dup"])
        if len(ids) > 1 or len(sids) > 1 or firsts > 1:
            found.duplicated.append(f"key {key}: ids {ids}, stream ids {sids}, {firsts} firsts")
        elif firsts == 0:
            found.notes.append(f"key {key}: no receipt says first (the first write failed?)")


_DOC_FIELDS = ["status", "source", "sources", "created_at", "indexed_at", "content"]


async def read_state(redis: Any, keys: Keys, ids: list[str]) -> tuple[list[Any], list[Any]]:
    """Each id's memory hash fields and outcome, pipelined."""
    docs, outcomes = [], []
    for first in range(0, len(ids), 1000):
        pipe = redis.pipeline(transaction=False)
        for memory_id in ids[first : first + 1000]:
            pipe.hmget(keys.doc(memory_id), _DOC_FIELDS)
            pipe.get(keys.outcome(memory_id))
        replies = await pipe.execute()
        docs += [[_text(v) for v in d] for d in replies[0::2]]
        outcomes += [json.loads(o) if o else None for o in replies[1::2]]
    return docs, outcomes


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def classify(
    found: Audit,
    memory_id: str,
    doc: list[str | None],
    outcome: dict[str, Any] | None,
    in_dlq: bool,
    counted: bool,
) -> None:
    """One accepted write: indexed (hash), merged, dropped (with a reason), else lost."""
    has_doc = doc[0] is not None
    status = (outcome or {}).get("status")
    if has_doc and status in ("merged", "dropped"):
        found.duplicated.append(f"{memory_id}: {status} and stored")
    if has_doc:
        final = "indexed"
        if status != "indexed":
            found.notes.append(f"{memory_id}: stored, outcome {status}")
    elif status == "merged":
        final = "merged"
    elif status == "dropped" and outcome and outcome.get("reason"):
        final = "dropped"
        if counted:
            found.reasons[str(outcome["reason"])] += 1
    elif in_dlq:
        final = "dead_letter"
        found.dead_lettered.append(memory_id)
    else:
        final = "lost"
        found.lost.append(f"{memory_id}: outcome {outcome}, no memory")
    found.status_of[memory_id] = final
    if counted:
        found.outcomes[final] += 1


async def check_hashes(found: Audit, redis: Any, keys: Keys, accepted: set[str]) -> None:
    """Every stored memory is an accepted write's, each write's source in one memory only."""
    names = [_text(k) async for k in redis.scan_iter(match=keys.doc_prefix + "*", count=1000)]
    by_source: Counter[str] = Counter()
    contents: Counter[str] = Counter()
    sources_of_targets: dict[str, set[str]] = {}
    for first in range(0, len(names), 1000):
        chunk = names[first : first + 1000]
        pipe = redis.pipeline(transaction=False)
        for name in chunk:
            pipe.hmget(name, ["source", "sources", "content", "status", "visibility", "agent_id"])
        for name, values in zip(chunk, await pipe.execute(), strict=True):
            assert name is not None
            memory_id = name.removeprefix(keys.doc_prefix)
            source, sources, content, status, visibility, agent = (_text(v) or "" for v in values)
            if memory_id not in accepted:
                found.duplicated.append(f"{memory_id}: stored, but no write got this id")
            if source:
                by_source[source] += 1
            sources_of_targets[memory_id] = set(sources.split("|"))
            if status == "active":
                owner = agent if visibility == "private" else ""
                contents[f"{owner}\0{' '.join(content.split()).casefold()}"] += 1
    found.duplicated += [f"source {s} in {n} memories" for s, n in by_source.items() if n > 1]
    found.twins = sum(n - 1 for n in contents.values() if n > 1)
    for text, n in contents.most_common(3):
        if n > 1:
            found.notes.append(f"{n} active memories read {text.split(chr(0))[1][:80]!r}")
    found.notes.append(f"{len(names)} memory hashes")


async def spot_check_get(found: Audit, client: AsyncMemoryClient, ids: list[str]) -> None:
    """``client.get`` agrees with the bulk read on a sample of ids."""
    expect = {"indexed": "active", "merged": "merged", "dropped": "dropped"}
    for memory_id in random.Random(3).sample(ids, min(300, len(ids))):
        record = await client.get(memory_id)
        want = expect.get(found.status_of[memory_id])
        got = record.status if record else None
        if want is not None and got != want:
            found.notes.append(f"get({memory_id}) is {got}, the bulk read says {want}")
