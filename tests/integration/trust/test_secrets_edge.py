"""Secrets at the write edge, on a real Redis with real workers: under the default
(``mask``) no byte of a secret is found in any key of the namespace (streams, outcomes,
memories, drops: every value read and ``DUMP``ed) and look-alikes are stored as
written; ``drop`` stores nothing but a masked outcome, ``hold`` sets the event's verdict,
``keep`` keeps; a writer that bypasses the client is masked by the workers, filters or
not."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.codec import EVENT_FIELD, decode_event, encode_event
from hindsight_redis.core.keys import namespace_registry
from hindsight_redis.core.requests import parse_write
from tests.integration.helpers import Drain

DATA = Path(__file__).resolve().parents[2] / "data" / "secrets.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
SECRETS = [r for r in ROWS if r["label"] == "secret"]
BENIGN = [r for r in ROWS if r["label"] == "benign"]
TOKEN = "ghp_" + "Zq8vN3kLp0Xw7rTy" * 2 + "AbCd"
CARD = "4111 1111 1111 1111"


async def _everything(redis: Redis, prefix: str) -> dict[bytes, list[bytes]]:
    """Every key under ``prefix`` (the namespace's and the prefix's own): its name, its
    DUMP and its values as read back (a DUMP may be compressed)."""
    seen: dict[bytes, list[bytes]] = {}
    async for key in redis.scan_iter(match=f"{prefix}:*", count=1000):
        kind = (await redis.type(key)).decode()
        values = seen.setdefault(key, [key, await redis.dump(key) or b""])
        if kind == "string":
            values.append(await redis.get(key) or b"")
        elif kind == "hash":
            values += [x for pair in (await redis.hgetall(key)).items() for x in pair]
        elif kind == "stream":
            for _, fields in await redis.xrange(key):
                values += [x for pair in fields.items() for x in pair]
        elif kind == "list":
            values += await redis.lrange(key, 0, -1)
        elif kind == "set":
            values += list(await redis.smembers(key))
        elif kind == "zset":
            values += await redis.zrange(key, 0, -1)
    return seen


_IDS = re.compile(rb"[0-9a-f]{16,}|[0-9]{10,}(?:\.[0-9]+)?(?:-[0-9]+)?")


def _holders(seen: dict[bytes, list[bytes]], secret: str) -> list[bytes]:
    """The keys any of whose values hold ``secret``'s bytes. A secret shorter than 8
    characters (a PIN) is looked for in the values read back, without the ids, digests
    and timestamps that hold any four digits by chance."""
    needle = secret.encode()
    if len(needle) >= 8:
        return [key for key, values in seen.items() if any(needle in v for v in values)]
    return [
        key for key, values in seen.items() if any(needle in _IDS.sub(b"", v) for v in values[2:])
    ]


def _found(seen: dict[bytes, list[bytes]], secret: str) -> bool:
    return bool(_holders(seen, secret))


async def test_by_default_no_byte_of_a_secret_is_stored_and_look_alikes_are_kept(
    client: AsyncMemoryClient, settings: Settings, redis: Redis, drain: Drain
) -> None:
    items: list[dict[str, Any]] = [{"content": r["text"], "session_id": "s"} for r in SECRETS]
    items += [
        {"content": "deployed the release", "context": f"use {TOKEN} for CI", "tags": ["ci"]},
        {"content": "paid the invoice", "source": f"card {CARD}", "tags": [f"card:{CARD}"]},
    ]
    benign = await client.write_many([{"content": r["text"]} for r in BENIGN])
    masked = await client.write_many(items, context_from_previous=2)
    one = await client.write(f"the staging token is {TOKEN}")
    await drain()
    assert all(r.status in ("accepted", "indexed") for r in [*masked, one])
    seen = await _everything(redis, settings.key_prefix)
    said = "\n".join(r["text"] for r in BENIGN)  # "call ext. 4821": a look-alike's own digits
    leaked = [s for r in SECRETS for s in r["secrets"] if s not in said and _found(seen, s)]
    assert not leaked
    assert not _found(seen, TOKEN) and not _found(seen, CARD)
    assert _found(seen, "[secret:")  # masked, not dropped
    changed = []
    for row, receipt in zip(BENIGN, benign, strict=True):
        record = await client.get(receipt.id)
        assert record is not None
        if (record.original or record.content) != row["text"]:
            changed.append(row["text"])
    assert len(changed) <= 1, changed
    record = await client.get(masked[-1].id)
    assert record is not None and CARD not in json.dumps([record.source, record.tags])


async def test_drop_stores_nothing_but_a_masked_outcome(
    settings: Settings, redis: Redis, drain: Drain
) -> None:
    dropping = settings.model_copy(update={"secrets": "drop"})
    async with AsyncMemoryClient(dropping) as client:
        receipt = await client.write(f"my token is {TOKEN}", wait=True)
        batch = await client.write_many(
            [
                {"content": "the deploy window is Tuesday"},
                {"content": f"card {CARD} for the dinner", "idempotency_key": "k1"},
                {"content": "the office moved to the 4th floor"},
            ]
        )
        again = await client.write(f"card {CARD} for the dinner", idempotency_key="k1")
        assert await redis.xlen(client.keys.stream) == 2  # the kept two only
        await drain(dropping)
        assert receipt.status == "dropped" and receipt.reason == "secret"
        assert [r.status for r in batch] == ["accepted", "dropped", "accepted"]
        assert again.duplicate and again.id == batch[1].id and again.status == "dropped"
        record = await client.get(receipt.id)
        assert record is not None and record.status == "dropped"
        assert record.reason == "secret (github-token)" and TOKEN not in record.content
        assert "[secret:github-token]" in record.content
        stats = await client.stats()
        assert stats["dropped"]["secret"] == 2
        kept = await client.get(batch[0].id)
        assert kept is not None and kept.status == "active"
    seen = await _everything(redis, settings.key_prefix)
    assert not _found(seen, TOKEN) and not _found(seen, CARD)


async def test_hold_appends_the_write_as_written_with_the_verdict(
    settings: Settings, redis: Redis
) -> None:
    holding = settings.model_copy(update={"secrets": "hold"})
    async with AsyncMemoryClient(holding) as client:
        first = await client.write(f"my token is {TOKEN}")
        batch = await client.write_many(
            [{"content": f"card {CARD}", "session_id": "s"}, {"content": "ok", "session_id": "s"}],
            context_from_previous=1,
        )
        entries = await redis.xrange(client.keys.stream)
    events = [decode_event(fields) for _, fields in entries]
    assert [e.event_id for e in events] == [first.id, *(r.id for r in batch)]
    assert events[0].hold == "secret:github-token" and events[0].content == f"my token is {TOKEN}"
    assert events[1].hold == "secret:card-number" and CARD in events[1].content
    # The next item's context quotes the held one masked: only the held write holds it.
    assert events[2].hold is None and events[2].context == "card [secret:card-number]"


async def test_keep_stores_what_was_written(settings: Settings, redis: Redis, drain: Drain) -> None:
    keeping = settings.model_copy(update={"secrets": "keep"})
    async with AsyncMemoryClient(keeping) as client:
        receipt = await client.write(f"the CI token is {TOKEN}, rotate it monthly")
        await drain(keeping)
        record = await client.get(receipt.id)
    assert record is not None and TOKEN in record.content


async def test_workers_mask_what_a_writer_put_on_the_stream_past_the_client(
    settings: Settings, redis: Redis, drain: Drain
) -> None:
    unfiltered = settings.model_copy(update={"filters_enabled": False})
    keys = AsyncMemoryClient(unfiltered).keys
    raw = parse_write(
        {"content": f"the CI token is {TOKEN}", "tags": [f"t:{TOKEN}"], "source": "raw"},
        namespace=keys.namespace,
        max_content_chars=32_000,
        max_tags=32,
    ).event
    await redis.sadd(namespace_registry(keys.prefix), keys.namespace)
    await redis.xadd(keys.stream, {EVENT_FIELD: encode_event(raw)})
    await drain(unfiltered)
    async with AsyncMemoryClient(unfiltered) as client:
        record = await client.get(raw.event_id)
        stats = await client.stats()
    assert record is not None and record.status == "active"
    assert record.content == "the CI token is [secret:github-token]"
    assert record.tags == ("t:[secret:github-token]",)
    assert stats["counters"]["secrets:masked"] == 1
    # The entry was trimmed once acknowledged (stream_keep_acked 0): nothing holds the token.
    seen = await _everything(redis, settings.key_prefix)
    assert _holders(seen, TOKEN) == []
