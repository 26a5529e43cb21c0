"""The cluster pipeline's retry after a failover: what is sent again (no Redis: redis-py's
pipeline execution is replaced by a script of replies)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis import exceptions as rx
from redis.asyncio.cluster import ClusterNode, ClusterPipeline

from hindsight_redis.redis import cluster
from hindsight_redis.redis.cluster import ClusterClient, ClusterClientPipeline

FirstAttempt = Callable[[ClusterPipeline, list[Any], list[str]], Awaitable[list[Any]]]


def _script(monkeypatch: pytest.MonkeyPatch, first: FirstAttempt) -> list[list[str]]:
    """redis-py's execution replaced: ``first`` plays the first attempt (its queue and the
    commands' names), every later one replies to each command; the commands of each attempt
    are returned."""
    attempts: list[list[str]] = []

    async def execute(
        self: ClusterPipeline, raise_on_error: bool = True, allow_redirections: bool = True
    ) -> list[Any]:
        queue = self._execution_strategy._command_queue  # type: ignore[attr-defined]
        names = [" ".join(str(a) for a in command.args) for command in queue]
        attempts.append(names)
        if len(attempts) == 1:
            return await first(self, queue, names)
        await self.reset()  # type: ignore[no-untyped-call]
        return [f"reply to {n}" for n in names]

    async def nothing(self: ClusterClient, *args: Any, **kwargs: Any) -> ClusterClient:
        return self

    monkeypatch.setattr(ClusterPipeline, "execute", execute)
    monkeypatch.setattr(ClusterClient, "initialize", nothing)
    monkeypatch.setattr(cluster, "_FIRST_PAUSE_S", 0.001)
    return attempts


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands of each attempt; the first attempt's last command loses its connection."""

    async def first(pipe: ClusterPipeline, queue: list[Any], names: list[str]) -> list[Any]:
        await pipe.reset()  # type: ignore[no-untyped-call]
        return [f"reply to {n}" for n in names[:-1]] + [rx.ConnectionError("reset")]

    return _script(monkeypatch, first)


def _pipeline() -> ClusterClientPipeline:
    client = ClusterClient(startup_nodes=[ClusterNode("127.0.0.1", 1)], retry_s=5)
    return ClusterClientPipeline(client)


async def test_a_retry_sends_again_only_the_commands_without_a_reply(
    sent: list[list[str]],
) -> None:
    pipe = _pipeline()
    pipe.execute_command("XREADGROUP", "a")
    pipe.execute_command("XREADGROUP", "b")
    replies = await pipe.execute()
    assert sent == [["XREADGROUP a", "XREADGROUP b"], ["XREADGROUP b"]]
    assert replies == ["reply to XREADGROUP a", "reply to XREADGROUP b"]


async def test_a_confirmation_sent_again_takes_the_writes_before_it_along(
    sent: list[list[str]],
) -> None:
    pipe = _pipeline()
    pipe.execute_command("XADD", "s")
    pipe.execute_command("WAITAOF", 1, 0, 100)
    replies = await pipe.execute()
    assert sent == [["XADD s", "WAITAOF 1 0 100"], ["XADD s", "WAITAOF 1 0 100"]]
    assert replies == ["reply to XADD s", "reply to WAITAOF 1 0 100"]


async def test_an_attempt_cut_off_sends_again_the_commands_left_unanswered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An attempt that raises (a master killed mid-pipeline) keeps the replies its commands
    got; a command redis-py left unanswered (redis-py 8: a bare ``object()``, not None) is
    sent again, never handed back as its reply."""

    async def first(pipe: ClusterPipeline, queue: list[Any], names: list[str]) -> list[Any]:
        queue[0].result = f"reply to {names[0]}"
        assert type(queue[1].result) is object or queue[1].result is None  # unanswered
        raise rx.ConnectionError("the node went away")

    attempts = _script(monkeypatch, first)
    pipe = _pipeline()
    pipe.execute_command("XREADGROUP", "a")
    pipe.execute_command("XREADGROUP", "b")
    replies = await pipe.execute(raise_on_error=False)
    assert attempts == [["XREADGROUP a", "XREADGROUP b"], ["XREADGROUP b"]]
    assert replies == ["reply to XREADGROUP a", "reply to XREADGROUP b"]
