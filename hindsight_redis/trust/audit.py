"""The audit trail of a namespace: who wrote, approved, rejected, resolved, forgot, swept,
purged and erased what, and when.

One capped Redis stream per namespace (``Keys.audit``), trimmed by age
(``audit_retention_days``: ``XADD ... MINID``). An entry holds the action, who
asked (``by``) and how that caller was identified (``how``: ``token``,
``settings``, ``argument``), the memory ids it touched (at most
``SHOWN_IDS`` of them, with their count and a digest of them all) and
plain-text details. Never content: callers pass ids, counts and digests,
and ``audit_fields`` refuses a detail longer than ``MAX_DETAIL_CHARS``.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import InvalidArgument, redis_errors

SHOWN_IDS = 20
"""Memory ids an entry lists; past them, the count and the digest say how many and which."""
MAX_DETAIL_CHARS = 200
"""The longest detail an entry takes (ids, counts, reasons: never a memory's text)."""
ACTIONS = (
    "write",
    "approve",
    "reject",
    "resolve",
    "forget",
    "restore",
    "sweep",
    "purge",
    "import",
    "erase",
)
"""What the trail records."""

CALLER_HOW: ContextVar[str] = ContextVar("hindsight_caller_how", default="")
"""How the caller of the call under way was identified, when a service knows better than
the client it calls (``token``: an HTTP bearer token); "" otherwise (``identified_by``)."""


@contextlib.contextmanager
def identified_by(how: str) -> Iterator[None]:
    """Within the block, calls say their caller was identified by ``how`` (``CALLER_HOW``)."""
    reset = CALLER_HOW.set(how)
    try:
        yield
    finally:
        CALLER_HOW.reset(reset)


def digest_ids(ids: Iterable[str]) -> str:
    """A digest of a set of memory ids (sorted, so the same set gives the same digest)."""
    joined = "\n".join(sorted(set(ids)))
    return hashlib.sha256(joined.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One entry of the trail: ``action`` by ``by`` (identified by ``how``) at ``at``
    (unix seconds), on ``count`` memories (``ids``: the first ``SHOWN_IDS``; ``digest``:
    of them all), with ``details``."""

    entry_id: str
    action: str
    by: str
    at: float
    how: str = ""
    ids: tuple[str, ...] = ()
    count: int = 0
    digest: str = ""
    details: Mapping[str, str] = field(default_factory=dict)


def audit_fields(
    action: str,
    by: str,
    *,
    how: str = "",
    ids: Sequence[str] = (),
    at: float | None = None,
    details: Mapping[str, str | int | float] | None = None,
) -> dict[str, str]:
    """The fields of one entry (pure): ``InvalidArgument`` for an unknown action or a
    detail too long to be an id, a count or a reason."""
    if action not in ACTIONS:
        raise InvalidArgument(f"unknown audit action {action!r}")
    fields = {
        "action": action,
        "by": by or "operator",
        "how": how,
        "at": repr(time.time() if at is None else at),
        "count": str(len(ids)),
    }
    if ids:
        fields["ids"] = ",".join(ids[:SHOWN_IDS])
        fields["digest"] = digest_ids(ids)
    for name, value in (details or {}).items():
        text = str(value)
        if len(text) > MAX_DETAIL_CHARS:
            raise InvalidArgument(f"audit detail {name} is too long to be an id or a reason")
        fields[f"d:{name}"] = text
    return fields


def entry_from_fields(entry_id: str, fields: Mapping[str, str]) -> AuditEntry:
    """An ``AuditEntry`` from a stream entry's (text) fields."""
    ids = tuple(i for i in fields.get("ids", "").split(",") if i)
    return AuditEntry(
        entry_id=entry_id,
        action=fields.get("action", ""),
        by=fields.get("by", ""),
        at=float(fields.get("at") or 0.0),
        how=fields.get("how", ""),
        ids=ids,
        count=int(fields.get("count") or 0),
        digest=fields.get("digest", ""),
        details={k[2:]: v for k, v in fields.items() if k.startswith("d:")},
    )


def oldest_kept_id(retention_days: float, now: float | None = None) -> str:
    """The ``MINID`` that trims entries older than ``retention_days``."""
    now = time.time() if now is None else now
    return str(max(int((now - retention_days * 86_400.0) * 1000), 0))


def queue_audit(
    pipe: Pipeline,
    keys: Keys,
    action: str,
    by: str,
    *,
    retention_days: float,
    how: str = "",
    ids: Sequence[str] = (),
    **details: str | int | float,
) -> None:
    """Queue the append of one entry on ``pipe`` (``record_audit``, for several at once)."""
    fields: dict[Any, Any] = audit_fields(action, by, how=how, ids=ids, details=details)
    pipe.xadd(keys.audit, fields, minid=oldest_kept_id(retention_days), approximate=True)


async def record_audit(
    redis: Redis,
    keys: Keys,
    action: str,
    by: str,
    *,
    retention_days: float,
    how: str = "",
    ids: Sequence[str] = (),
    **details: str | int | float,
) -> str:
    """Append one entry to the namespace's trail (entries past ``retention_days`` go);
    its stream id."""
    fields: dict[Any, Any] = audit_fields(action, by, how=how, ids=ids, details=details)
    with redis_errors("record the audit entry"):
        entry_id = await redis.xadd(
            keys.audit, fields, minid=oldest_kept_id(retention_days), approximate=True
        )
    return as_text(entry_id)


async def read_audit(
    redis: Redis,
    keys: Keys,
    *,
    since: float | None = None,
    until: float | None = None,
    agent: str | None = None,
    action: str | None = None,
    count: int = 100,
) -> list[AuditEntry]:
    """The latest entries, newest first: written at or after ``since`` and at or before
    ``until`` (unix seconds), by ``agent``, of ``action``; at most ``count``."""
    if count < 1:
        raise InvalidArgument("count must be at least 1")
    low = "-" if since is None else str(max(int(since * 1000), 0))
    found: list[AuditEntry] = []
    # Stream ids are milliseconds: the whole millisecond of ``until`` is in.
    high = "+" if until is None else str(max(int(until * 1000), 0))
    with redis_errors("read the audit trail"):
        while len(found) < count:
            page = await redis.xrevrange(keys.audit, max=high, min=low, count=max(count, 100))
            if not page:
                break
            for raw_id, raw in page:
                text = {as_text(k): as_text(v) for k, v in (raw or {}).items()}
                entry = entry_from_fields(as_text(raw_id), text)
                if (agent is None or entry.by == agent) and (
                    action is None or entry.action == action
                ):
                    found.append(entry)
            high = "(" + as_text(page[-1][0])
    return found[:count]
