"""What the LLM costs each namespace, and the daily budget that caps it.

Every call of ``LLMClient`` is charged to the namespace and stage its caller names with
``charged_to`` (a context variable: the stages set it around their calls, and the
concurrent calls of several namespaces each keep their own). After each answer the
client adds its tokens (prompt and completion, as litellm's usage reports them) and its
dollars (litellm's cost map: nothing for a model the map does not price) to two hashes
of the namespace: the UTC day's (``Keys.llm_spend``, kept ``DAYS_KEPT`` days) and the
all-time one (``Keys.llm_spend_total``, which the metrics count from). Fields: ``tokens``,
``usd``, ``calls``, ``unpriced`` (calls the cost map could not price), and the same per
stage (``tokens:score``...), with ``skipped:<stage>``: calls not made for the budget.

Before each call the client asks ``SpendLedger.allows``: past the day's budget
(``llm_daily_tokens``, ``llm_daily_usd``) the call is not made (``BudgetReached``) and
the stage uses its offline heuristic; nothing is dropped for lack of budget. The check
reads a day's total at most ``refresh_s`` old, updated by this process's own calls, so
the calls in flight at the edge (in this worker and in others) all pass it: a day's
spend may overshoot its budget by the calls in flight at once, at most a batch per worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.errors import ProviderError, redis_errors

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from hindsight_redis.settings import LLMSettings

logger = logging.getLogger(__name__)

DAYS_KEPT = 8
"""Days a day's hash is kept: a week back for ``stats``, and the day being written."""
STAGES = ("score", "summary", "judge", "poisoning")
"""The stages that call the model (the conflict judge is ``judge``)."""


class BudgetReached(ProviderError):
    """The namespace spent its daily LLM budget: the call was not made."""

    retryable = False


@dataclass(frozen=True, slots=True)
class Charge:
    """Who pays for a call: a namespace, and the stage that asked."""

    namespace: str
    stage: str


_CHARGE: ContextVar[Charge | None] = ContextVar("hindsight_llm_charge", default=None)


@contextlib.contextmanager
def charged_to(namespace: str, stage: str) -> Iterator[Charge]:
    """The LLM calls made inside (and in the tasks started inside) are charged to
    ``namespace`` and ``stage``."""
    charge = Charge(namespace, stage)
    token = _CHARGE.set(charge)
    try:
        yield charge
    finally:
        _CHARGE.reset(token)


def current_charge() -> Charge | None:
    """The charge of the calls made here; None outside ``charged_to``."""
    return _CHARGE.get()


@dataclass(frozen=True, slots=True)
class Usage:
    """One call's tokens, and its dollars when litellm's cost map prices the model."""

    prompt_tokens: int
    completion_tokens: int
    usd: float | None

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens."""
        return self.prompt_tokens + self.completion_tokens


def usage_of(response: Any, litellm: Any) -> Usage:
    """The usage litellm reports on ``response`` and its cost (``litellm.completion_cost``;
    None for a model its cost map does not know)."""
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    if not isinstance(cost, int | float):
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # litellm raises for a model missing from its cost map
            cost = None
    return Usage(prompt, completion, None if cost is None else float(cost))


def day_of(now: float) -> str:
    """The UTC day of the unix time ``now``, ``YYYY-MM-DD``: a day's hash name."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class SpendBudget:
    """A namespace's daily budget: tokens and dollars, 0 meaning unlimited."""

    tokens: int = 0
    usd: float = 0.0

    @classmethod
    def of(cls, llm: LLMSettings) -> SpendBudget:
        """The budget ``llm`` sets (``llm_daily_tokens``, ``llm_daily_usd``)."""
        return cls(llm.llm_daily_tokens, llm.llm_daily_usd)

    @property
    def unlimited(self) -> bool:
        """Whether neither limit is set."""
        return self.tokens <= 0 and self.usd <= 0

    def reached(self, tokens: int, usd: float) -> bool:
        """Whether a day that spent ``tokens`` and ``usd`` has reached the budget."""
        return (0 < self.tokens <= tokens) or (0 < self.usd <= usd)


@dataclass(slots=True)
class Spend:
    """A namespace's spend over a day, or over all time: the totals and each stage's."""

    tokens: int = 0
    usd: float = 0.0
    calls: int = 0
    unpriced: int = 0
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per stage: ``tokens``, ``usd``, ``calls``, ``skipped`` (calls the budget saved)."""

    @classmethod
    def from_hash(cls, raw: Mapping[Any, Any]) -> Spend:
        """The spend a spend hash (``HGETALL``) holds."""
        spend = cls()
        for key, value in raw.items():
            name, number = as_text(key), float(as_text(value))
            what, _, stage = name.partition(":")
            if stage:
                spend.stages.setdefault(stage, {})[what] = number
            elif what == "usd":
                spend.usd = number
            elif what in ("tokens", "calls", "unpriced"):
                setattr(spend, what, int(number))
        return spend

    @property
    def skipped(self) -> int:
        """Calls not made for the budget, all stages."""
        return int(sum(s.get("skipped", 0) for s in self.stages.values()))

    def as_dict(self, budget: SpendBudget | None = None) -> dict[str, Any]:
        """The spend as ``stats`` shows it, with ``budget`` (and whether it is reached)."""
        shown: dict[str, Any] = {
            "tokens": self.tokens,
            "usd": round(self.usd, 9),
            "calls": self.calls,
            "unpriced_calls": self.unpriced,
            "skipped_for_budget": self.skipped,
            "stages": {
                stage: {k: (round(v, 9) if k == "usd" else int(v)) for k, v in sorted(d.items())}
                for stage, d in sorted(self.stages.items())
            },
        }
        if budget is not None:
            shown["budget"] = {"tokens": budget.tokens, "usd": budget.usd}
            shown["budget_reached"] = budget.reached(self.tokens, self.usd)
        return shown


@dataclass(slots=True)
class _Seen:
    tokens: int
    usd: float
    at: float


class SpendLedger:
    """Counts each namespace's LLM spend in Redis and says whether its budget allows a call.

    Built before the worker's connection exists (the shared stages are): ``attach``
    gives it the connection and the key prefix. Unattached, it counts nothing and
    allows every call.
    """

    def __init__(
        self,
        budget: SpendBudget,
        *,
        refresh_s: float = 1.0,
        clock: Any = time.time,
    ) -> None:
        """Enforce ``budget``, reading a day's totals at most every ``refresh_s``."""
        self.budget = budget
        self.refresh_s = refresh_s
        self._clock = clock
        self._redis: Redis | None = None
        self._prefix = ""
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._reading = asyncio.Lock()

    def attach(self, redis: Redis, prefix: str) -> None:
        """Count in ``redis``, under the keys of ``prefix`` (the first attach stays)."""
        if self._redis is None:
            self._redis, self._prefix = redis, prefix

    async def allows(self, namespace: str) -> bool:
        """Whether ``namespace``'s spend today is under its budget."""
        if self.budget.unlimited or self._redis is None:
            return True
        now = self._clock()
        day = day_of(now)
        seen = self._seen.get((namespace, day))
        if seen is None or now - seen.at >= self.refresh_s:
            # A batch's calls start together: one of them reads, the others wait for it.
            async with self._reading:
                seen = self._seen.get((namespace, day))
                if seen is None or now - seen.at >= self.refresh_s:
                    seen = await self._read(namespace, day, now)
        return not self.budget.reached(seen.tokens, seen.usd)

    async def _read(self, namespace: str, day: str, now: float) -> _Seen:
        assert self._redis is not None
        with redis_errors("read the LLM spend"):
            tokens, usd = await self._redis.hmget(
                Keys(self._prefix, namespace).llm_spend(day), ["tokens", "usd"]
            )
        seen = _Seen(int(as_text(tokens or "0")), float(as_text(usd or "0")), now)
        self._forget_days(day)
        self._seen[(namespace, day)] = seen
        return seen

    async def record(self, charge: Charge, usage: Usage) -> None:
        """Add one call's ``usage`` to ``charge``'s namespace, today and all time."""
        if self._redis is None:
            return
        now = self._clock()
        day = day_of(now)
        keys = Keys(self._prefix, charge.namespace)
        stage = charge.stage
        with redis_errors("count the LLM spend"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in (keys.llm_spend(day), keys.llm_spend_total):
                    pipe.hincrby(key, "tokens", usage.tokens)
                    pipe.hincrby(key, "calls", 1)
                    pipe.hincrby(key, f"tokens:{stage}", usage.tokens)
                    pipe.hincrby(key, f"calls:{stage}", 1)
                    if usage.usd is None:
                        pipe.hincrby(key, "unpriced", 1)
                    pipe.hincrbyfloat(key, "usd", usage.usd or 0.0)
                    pipe.hincrbyfloat(key, f"usd:{stage}", usage.usd or 0.0)
                pipe.expire(keys.llm_spend(day), DAYS_KEPT * 86_400)
                replies = await pipe.execute()
        # The day's totals as they stand after this call: the next check needs no read.
        usd_at = 5 if usage.usd is None else 4  # after tokens, calls, per stage, unpriced
        self._seen[(charge.namespace, day)] = _Seen(
            int(replies[0]), float(as_text(replies[usd_at])), now
        )

    async def skipped(self, charge: Charge) -> None:
        """Count a call ``charge``'s stage did not make for the budget."""
        if self._redis is None:
            return
        keys = Keys(self._prefix, charge.namespace)
        day = day_of(self._clock())
        with redis_errors("count the LLM spend"):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hincrby(keys.llm_spend(day), f"skipped:{charge.stage}", 1)
                pipe.expire(keys.llm_spend(day), DAYS_KEPT * 86_400)
                pipe.hincrby(keys.llm_spend_total, f"skipped:{charge.stage}", 1)
                await pipe.execute()

    def _forget_days(self, today: str) -> None:
        # Yesterday's totals are never read again.
        for key in [k for k in self._seen if k[1] != today]:
            del self._seen[key]


@dataclass(frozen=True, slots=True)
class NamespaceSpend:
    """A namespace's spend today and all time."""

    namespace: str
    today: Spend
    total: Spend


async def read_spend(
    redis: Redis, namespaces: Sequence[Keys], *, now: float | None = None
) -> list[NamespaceSpend]:
    """Each namespace's spend today (UTC) and all time, in one round trip."""
    if not namespaces:
        return []
    day = day_of(time.time() if now is None else now)
    with redis_errors("read the LLM spend"):
        async with redis.pipeline(transaction=False) as pipe:
            for keys in namespaces:
                pipe.hgetall(keys.llm_spend(day))
                pipe.hgetall(keys.llm_spend_total)
            replies = await pipe.execute()
    return [
        NamespaceSpend(
            keys.namespace, Spend.from_hash(replies[2 * i]), Spend.from_hash(replies[2 * i + 1])
        )
        for i, keys in enumerate(namespaces)
    ]
