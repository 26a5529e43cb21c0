"""The retention score: how much a memory is worth keeping, from 0 to 1.

Pure module: no I/O. Sweeps (``lifecycle``) archive the memories that score
lowest. The score is a weighted mean of four parts, each in 0..1::

    frequency = min(1, ln(1 + access_count) / ln(1 + access_saturation))
    recency   = 0.5 ** (days since the last access (or creation) / half_life_days)
    write     = the write score the filters gave it (0.5 when it was never scored)
    protected = 1 if protected else 0

    score = (w_access * frequency + w_recency * recency + w_write * write
             + w_protected * protected) / (w_access + w_recency + w_write + w_protected)

Frequency grows with the log of the count, so one memory read a thousand
times does not dwarf the rest: past ``access_saturation`` reads it is full.
A memory's half-life is its own (written with it), else its ``task_type``'s
(``RetentionSettings.task_half_life_days``), else the global ``half_life_days``.

Every function takes numbers or numpy arrays alike: a sweep scores a whole
namespace in one call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

SECONDS_PER_DAY = 86_400.0
UNSCORED_WRITE_SCORE = 0.5
"""The write part of a memory stored without a write score (filters off)."""

if TYPE_CHECKING:
    from hindsight_redis.settings import RetentionSettings

ArrayLike = npt.ArrayLike


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Weights and half-lives of the retention score (see the module docstring)."""

    access_weight: float = 0.4
    recency_weight: float = 0.3
    write_score_weight: float = 0.2
    protected_weight: float = 0.1
    access_saturation: int = 100
    half_life_days: float = 90.0
    task_half_life_days: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        weights = (
            self.access_weight,
            self.recency_weight,
            self.write_score_weight,
            self.protected_weight,
        )
        if any(not math.isfinite(w) or w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError("retention weights must be >= 0 with a positive sum")
        if self.access_saturation < 1:
            raise ValueError("access_saturation must be at least 1")
        for name, days in {"": self.half_life_days, **self.task_half_life_days}.items():
            if not math.isfinite(days) or days <= 0:
                raise ValueError(f"half-life{' of ' + name if name else ''} must be > 0 days")

    @classmethod
    def from_settings(cls, retention: RetentionSettings) -> RetentionPolicy:
        """The policy the retention settings configure."""
        return cls(
            access_weight=retention.retention_access_weight,
            recency_weight=retention.retention_recency_weight,
            write_score_weight=retention.retention_write_score_weight,
            protected_weight=retention.retention_protected_weight,
            access_saturation=retention.retention_access_saturation,
            half_life_days=retention.half_life_days,
            task_half_life_days=dict(retention.task_half_life_days),
        )

    def half_life_for(self, task_type: str, own_days: float | None = None) -> float:
        """The half-life in days of a memory: its own, else its task type's, else the default."""
        if own_days is not None and own_days > 0:
            return float(own_days)
        return float(self.task_half_life_days.get(task_type, self.half_life_days))


@dataclass(frozen=True, slots=True)
class RetentionParts:
    """The four parts of a retention score (each 0..1) and the score itself."""

    frequency: npt.NDArray[np.float64]
    recency: npt.NDArray[np.float64]
    write: npt.NDArray[np.float64]
    protected: npt.NDArray[np.float64]
    score: npt.NDArray[np.float64]

    def row(self, i: int) -> dict[str, float]:
        """The parts of the ``i``-th memory as plain floats (for reports and tables)."""
        return {
            "score": float(self.score[i]),
            "frequency": float(self.frequency[i]),
            "recency": float(self.recency[i]),
            "write": float(self.write[i]),
            "protected": float(self.protected[i]),
        }


def retention_parts(
    policy: RetentionPolicy,
    *,
    access_count: ArrayLike,
    last_accessed_at: ArrayLike,
    created_at: ArrayLike,
    write_score: ArrayLike,
    protected: ArrayLike,
    half_life_days: ArrayLike,
    now: float,
) -> RetentionParts:
    """The retention scores of memories given as parallel arrays (or single numbers).

    ``write_score`` may hold NaN for memories never scored; ``half_life_days``
    is each memory's resolved half-life (``RetentionPolicy.half_life_for``).
    Times are unix seconds; a last access in the future counts as now.
    """
    count = np.maximum(np.asarray(access_count, dtype=np.float64), 0.0)
    frequency = np.minimum(np.log1p(count) / math.log1p(policy.access_saturation), 1.0)
    last = np.maximum(
        np.asarray(last_accessed_at, dtype=np.float64), np.asarray(created_at, dtype=np.float64)
    )
    age_days = np.maximum(now - last, 0.0) / SECONDS_PER_DAY
    recency = np.power(0.5, age_days / np.asarray(half_life_days, dtype=np.float64))
    scored = np.asarray(write_score, dtype=np.float64)
    write = np.clip(np.where(np.isnan(scored), UNSCORED_WRITE_SCORE, scored), 0.0, 1.0)
    guard = np.asarray(protected, dtype=np.float64)
    total = (
        policy.access_weight
        + policy.recency_weight
        + policy.write_score_weight
        + policy.protected_weight
    )
    score = (
        policy.access_weight * frequency
        + policy.recency_weight * recency
        + policy.write_score_weight * write
        + policy.protected_weight * guard
    ) / total
    return RetentionParts(
        frequency=np.atleast_1d(frequency),
        recency=np.atleast_1d(recency),
        write=np.atleast_1d(write),
        protected=np.atleast_1d(guard),
        score=np.atleast_1d(score),
    )


def retention_score(
    policy: RetentionPolicy,
    *,
    access_count: int,
    last_accessed_at: float,
    created_at: float,
    write_score: float | None,
    protected: bool,
    half_life_days: float,
    now: float,
) -> float:
    """The retention score of one memory (``retention_parts`` for one)."""
    parts = retention_parts(
        policy,
        access_count=access_count,
        last_accessed_at=last_accessed_at,
        created_at=created_at,
        write_score=math.nan if write_score is None else write_score,
        protected=1.0 if protected else 0.0,
        half_life_days=half_life_days,
        now=now,
    )
    return float(parts.score[0])


SCORED_FIELDS = (
    "access_count",
    "last_accessed_at",
    "created_at",
    "write_score",
    "protected",
    "task_type",
    "half_life_days",
)
"""The memory hash's fields a retention score is computed from (``score_fields``' rows)."""


def score_fields(
    policy: RetentionPolicy,
    rows: Sequence[Sequence[str | None]],
    *,
    pending_hits: Sequence[int] | None = None,
    now: float,
) -> tuple[RetentionParts, npt.NDArray[np.bool_]]:
    """The retention parts of memories given as their ``SCORED_FIELDS`` values (text, as
    the hash holds them; None: missing), and whether each is protected.

    ``pending_hits``: per memory, reads not folded into ``access_count`` yet: they count
    as reads made ``now``. Sweeps and the stale fraction (``lifecycle.staleness``) both
    score with it.
    """
    hits = list(pending_hits) if pending_hits is not None else [0] * len(rows)
    protected = np.array([r[4] == "1" for r in rows], dtype=np.bool_)
    parts = retention_parts(
        policy,
        access_count=np.array([float(r[0] or 0) + h for r, h in zip(rows, hits, strict=True)]),
        last_accessed_at=np.array(
            [now if h else float(r[1] or 0) for r, h in zip(rows, hits, strict=True)]
        ),
        created_at=np.array([float(r[2] or 0) for r in rows]),
        write_score=np.array([float(r[3]) if r[3] else math.nan for r in rows]),
        protected=protected,
        half_life_days=np.array(
            [policy.half_life_for(r[5] or "", float(r[6]) if r[6] else None) for r in rows]
        ),
        now=now,
    )
    return parts, protected


def pick_victims(
    score: npt.NDArray[np.float64],
    protected: npt.NDArray[np.bool_],
    *,
    threshold: float | None,
    max_active: int | None,
) -> npt.NDArray[np.intp]:
    """Which memories a sweep archives, lowest score first (indexes into ``score``).

    The unprotected ones under ``threshold``, and/or as many of the lowest
    unprotected ones as it takes to leave ``max_active`` active (protected
    memories count as active and are never picked, so a cap below their
    number cannot be reached). Ties go to the earlier index.
    """
    eligible = np.flatnonzero(~protected)
    order = eligible[np.argsort(score[eligible], kind="stable")]
    under = 0 if threshold is None else int((score[eligible] < threshold).sum())
    over = 0 if max_active is None else max(len(score) - max_active, 0)
    return order[: min(max(under, over), len(order))]
