"""Under ``durable`` a write is acknowledged only once ``WAITAOF`` (and, on a shard with
replicas, ``WAIT``) confirmed it: a reply saying "0 fsynced" is a ``WriteTimeout``, never
a receipt. Pure logic: a fake connection replays the server's replies, so the path where
the fsync did not happen in time (rare on a real server) is exercised every run."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.core.requests import parse_write
from hindsight_redis.errors import WriteTimeout
from hindsight_redis.settings import WriteSettings
from hindsight_redis.write.writer import StreamWriter


class _Pipeline:
    """Records the queued commands; ``execute`` returns one canned reply per command."""

    def __init__(self, conn: _Connection) -> None:
        self.conn = conn
        self.commands: list[tuple[Any, ...]] = []

    def xadd(self, *args: Any) -> None:
        self.commands.append(("XADD", *args))

    def sadd(self, *args: Any) -> None:
        self.commands.append(("SADD", *args))

    def execute_command(self, *args: Any, **options: Any) -> None:
        self.commands.append(args)

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        self.conn.sent.append(self.commands)
        replies = []
        for command in self.commands:
            name = str(command[0]).upper()
            if name in ("WAITAOF", "WAIT"):
                replies.append(self.conn.confirm[name])
            elif name == "XADD":
                replies.append(b"1-0")
            elif name == "SADD":
                replies.append(1)
            else:  # the write script (EVAL / EVALSHA): one "new" answer per event
                replies.append([b"n:1-0"])
        return replies


class _Connection:
    """Just enough of ``redis.asyncio.Redis`` for the writer's durable path."""

    def __init__(self, waitaof: list[int]) -> None:
        self.confirm: dict[str, Any] = {"WAITAOF": waitaof}
        self.sent: list[list[tuple[Any, ...]]] = []

    def pipeline(self, transaction: bool = True) -> _Pipeline:
        return _Pipeline(self)

    async def sadd(self, *args: Any) -> int:
        return 1


def _event() -> MemoryEvent:
    return parse_write(
        {"content": "The deploy of service-7 finished"},
        namespace="ns",
        max_content_chars=100,
        max_tags=3,
    ).event


def _writer() -> StreamWriter:
    writer = StreamWriter(WriteSettings(waitaof_timeout_ms=5), Keys("p", "ns"))
    writer._room_until = float("inf")  # the backlog gate is open (not what is tested)
    return writer


async def test_a_waitaof_reply_of_zero_fsyncs_is_not_acknowledged() -> None:
    conn = _Connection(waitaof=[0, 0])  # local fsyncs 0, replicas 0: the timeout passed
    with pytest.raises(WriteTimeout, match="AOF fsync was not confirmed"):
        await _writer().append_one(conn, _event(), durable=True)  # type: ignore[arg-type]
    assert any(c[0] == "WAITAOF" for c in conn.sent[-1])  # asked, in the write's pipeline


async def test_a_batch_with_a_waitaof_reply_of_zero_is_not_acknowledged() -> None:
    conn = _Connection(waitaof=[0, 0])
    with pytest.raises(WriteTimeout, match="AOF fsync was not confirmed"):
        await _writer().append(conn, [_event()], [False], durable=True)  # type: ignore[arg-type]


async def test_a_confirmed_fsync_is_acknowledged() -> None:
    # The control: the same fake, the fsync confirmed, gives receipts.
    conn = _Connection(waitaof=[1, 0])
    receipt = await _writer().append_one(conn, _event(), durable=True)  # type: ignore[arg-type]
    assert receipt.stream_id == "1-0"
    receipts = await _writer().append(conn, [_event()], [False], durable=True)  # type: ignore[arg-type]
    assert [r.stream_id for r in receipts] == ["1-0"]
