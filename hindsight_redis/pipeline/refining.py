"""A worker's refining: between its ingest rounds, beside them, or alone.

``pipeline.pacing`` says when; this module runs the steps over the served
namespaces (``NamespaceConsumer.refine``, one namespace per step, in turn):

- ``after_round``: after an ingest round, while writes arrive, the steps the
  refine share owes (short ones, for at most ``_ROUND_REFINE_S`` or what the round
  earned: the rest after the next rounds);
  and while the worker keeps up with them, a short step each round. After a
  round that had writes they run beside the next rounds (one task at a time),
  not before them: a write read next never waits for a refine step;
- ``beside``: the background task of a long-running worker, refining for as
  long as memories wait; its model runs at the lowest CPU priority
  (``providers.contextual``), so ingest and searches take the cores first;
- ``alone``: a worker of role ``refine``, which reads no stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from hindsight_redis.errors import RedisUnavailable, redis_errors
from hindsight_redis.pipeline.namespaces import ServedNamespaces
from hindsight_redis.pipeline.pacing import RefinePace
from hindsight_redis.providers.priority import normal_priority

log = logging.getLogger(__name__)
_TRIES = 8  # namespaces asked for refine work per step
_SPARE_STEP = 2  # memories a step between rounds takes while writes keep arriving
_MIN_PAUSE_S = 0.05
_ROUND_REFINE_S = 0.05
"""How long the refine steps after an ingest round take while writes arrive, unless the
round earned the share more. What the share is owed beyond waits for the next rounds (the
credit is kept), so no round starts a long refine: the steps run beside the next rounds,
but on the same cores (when they ran before the next read, a step of a whole refine batch,
or the steps of a second of credit, were the tail of the index lag)."""


class Refining:
    """Refine steps for one worker: ``share`` of its time while writes wait, ``multi``
    when it serves several namespaces (each asked only after a commit of its own);
    ``stopping`` ends the loops."""

    def __init__(
        self, served: ServedNamespaces, *, share: float, multi: bool, stopping: asyncio.Event
    ) -> None:
        self.served = served
        self.pace = RefinePace(share)
        self.multi = multi
        self.stopping = stopping
        self.committed = asyncio.Event()  # a round had writes: there may be work
        self._turn = 0
        self._since = time.monotonic()  # when the last round's refine steps ended
        self._running: asyncio.Task[bool] | None = None  # a busy round's steps

    async def step(self, most: int | None = None, *, between_rounds: bool = False) -> int:
        """A refine step (of at most ``most`` memories) in the next namespace that may
        have work; 0 if none (``between_rounds``: see ``Refiner.refine_once``)."""
        self._turn += 1
        tries = 0
        for consumer in self.served.rotation(self._turn):
            if self.multi and not consumer.may_refine:
                continue  # found nothing since its last commit
            done = await consumer.refine(most, between_rounds=between_rounds)
            if done:
                return done
            tries += 1
            if tries >= _TRIES:
                break
        return 0

    async def after_round(self, *, busy: bool, behind: bool, beside: bool) -> bool:
        """Steps after an ingest round (``busy``: it had writes; ``behind``: more wait);
        ``beside``: a background task refines. True if any memory was refined (the next
        read then only peeks at the streams).

        While writes arrive, the time since the last call earns the share its
        credit, whatever the CPU is doing: the background task runs at the lowest
        priority and gets nothing on a host busy with searches or other work, so
        these steps, at normal priority, are what guarantees progress. After a
        busy round they start in a task and the next round is read at once (False);
        a later round's call raises what they raised. After an idle round they run
        here, once the busy round's are done.
        """
        if busy:
            self.committed.set()
            running = self._running
            if running is not None and running.done():
                self._running = None
                running.result()  # their error is the loop's, as if they had run here
            if self._running is None:
                self._running = asyncio.create_task(self._steps(busy, behind, beside))
            return False
        await self.finish()
        return await self._steps(busy, behind, beside)

    async def finish(self) -> None:
        """Wait for the steps a busy round started (raising what they raised)."""
        running, self._running = self._running, None
        if running is not None:
            await running

    async def cancel(self) -> None:
        """Stop the steps a busy round started: a claimed memory stays pending (its claim
        expires), as when a worker dies mid-step."""
        running, self._running = self._running, None
        if running is not None:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await running

    async def _steps(self, busy: bool, behind: bool, beside: bool) -> bool:
        """``after_round``'s steps; True if any memory was refined."""
        now = time.monotonic()
        budget_s = _ROUND_REFINE_S
        if busy:
            budget_s = max(budget_s, self.pace.ingested(now - self._since))
        refined = 0
        most = _SPARE_STEP  # writes wait or may arrive any moment: short steps
        while self.pace.due and not self.stopping.is_set():
            started = time.monotonic()
            if started - now >= budget_s:
                break  # the rest of the credit waits for the next rounds
            with normal_priority():  # what the share owes must progress on busy cores
                done = await self.step(most, between_rounds=True)
            self.pace.refined(time.monotonic() - started)
            if not done:
                break
            refined += done
        if not refined and not behind and (busy or not beside):
            # Keeping up with the writes: a short step each round, at normal priority,
            # so that refining progresses on a host whose cores are busy with others.
            refined = await self.step(most if busy else None, between_rounds=busy)
        self._since = time.monotonic()
        return refined > 0

    async def beside(self, block_ms: int) -> None:
        """Refine for as long as memories wait, then wait for the next commit (or
        ``block_ms``); until stopped or cancelled."""
        pause_s = max(block_ms / 1000, _MIN_PAUSE_S)
        while not self.stopping.is_set():
            try:
                with redis_errors("refine"):
                    done = await self.step()
            except RedisUnavailable:  # the worker's loop waits the outage out
                done = 0
            except Exception:  # refining must never stop; ingest goes on regardless
                log.exception("background refining failed; trying again shortly")
                done = 0
            if done:
                continue
            self.committed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.committed.wait(), pause_s)

    async def alone(self, block_ms: int) -> bool:
        """A refine role's step: refine, or wait ``block_ms`` when nothing waits in any
        served namespace; False when nothing did."""
        if await self.step():
            return True
        for consumer in self.served.consumers.values():
            consumer.may_refine = True  # others' commits are not seen here: ask again
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), block_ms / 1000)
        return False
