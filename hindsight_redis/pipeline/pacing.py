"""How a worker shares its time between ingesting writes and refining memories.

Ingest comes first: a write must become searchable within milliseconds. But
a worker that refines only when the stream is idle makes no progress on a
pool fed by many agents, which may never pause, and every new memory is then
found without its contextual vector. So a worker refines:

- in the background, whenever the cores are free: a long-running worker's
  refine task runs its model at the lowest CPU priority (``pipeline.refining``),
  so ingest and searches come first (a burst worker refines between rounds
  instead, once it keeps up);
- while writes arrive, a share of its time (``refine_share``), whatever else
  the host does: the time between rounds that had writes earns ``share / (1 -
  share)`` of itself in refine credit, each refine step spends its own; the
  credit is capped, so a long ingest burst does not bank a long refine pause.

A worker of role ``ingest`` never refines; one of role ``refine`` only refines
(``Worker``), for operators who run refiners in processes or on machines of
their own.
"""

from __future__ import annotations

from typing import Literal

Role = Literal["all", "ingest", "refine"]
ROLES: tuple[Role, ...] = ("all", "ingest", "refine")
_MAX_CREDIT_S = 1.0


class RefinePace:
    """The refine share's bookkeeping for one worker (pure: the caller times the steps)."""

    def __init__(self, share: float) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError("refine share must be between 0 and 1")
        self.share = share
        self.credit_s = 0.0

    def ingested(self, seconds: float) -> float:
        """The worker spent ``seconds`` (not refining) while writes arrived; returns the
        refine seconds that earned."""
        earned = 0.0
        if 0.0 < self.share < 1.0:
            earned = seconds * self.share / (1.0 - self.share)
            self.credit_s = min(self.credit_s + earned, _MAX_CREDIT_S)
        return earned

    def refined(self, seconds: float) -> None:
        """A refine step taken out of the share took ``seconds``."""
        if self.share < 1.0:
            self.credit_s = max(self.credit_s - seconds, -_MAX_CREDIT_S)

    @property
    def due(self) -> bool:
        """True when the share owes the refiner a step."""
        return self.share >= 1.0 or (self.share > 0.0 and self.credit_s > 0.0)
