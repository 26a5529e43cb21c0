"""A small shared wrapper over ``litellm.acompletion``.

Used by the write scorer, the summarizer and the judges. It adds what every
caller needs and litellm leaves to them: a concurrency limit, a timeout,
retries with exponential backoff on retryable errors only, defensive JSON
parsing, errors wrapped as ``ProviderError`` at this boundary, and the one
point where calls are counted and held to a namespace's daily budget
(``providers.spend``: a call past it raises ``BudgetReached`` unmade).

litellm is imported lazily (it is slow to import and, unless told otherwise,
fetches a model cost map over the network on import).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from hindsight_redis.errors import ConfigError, ProviderError
from hindsight_redis.providers.credentials import missing_key
from hindsight_redis.providers.litellm_import import load_litellm
from hindsight_redis.providers.retries import is_retryable
from hindsight_redis.providers.spend import BudgetReached, SpendLedger, current_charge, usage_of

if TYPE_CHECKING:
    from hindsight_redis.settings import LLMSettings

logger = logging.getLogger(__name__)

_KEY_SETTING = "HINDSIGHT_LLM_API_KEY"
Answer = TypeVar("Answer")
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


class LLMOutputError(ProviderError):
    """The model answered, but not with what was asked (e.g. no JSON object)."""

    retryable = False


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer, tolerating code fences and chatter.

    Raises ``LLMOutputError`` when no JSON object can be found.
    """
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    candidates = [stripped]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise LLMOutputError(f"model answer is not a JSON object: {text[:80]!r}")


class LLMClient:
    """Chat completions through litellm, with the project's limits and errors.

    ``litellm_options`` are passed through to ``litellm.acompletion`` on every
    call; tests use ``mock_response=...`` (or ``mock_timeout=True``) to run
    litellm's real code path without a network. A call made inside
    ``spend.charged_to`` is checked against and counted in ``ledger``.
    """

    def __init__(
        self,
        llm: LLMSettings,
        *,
        model: str | None = None,
        ledger: SpendLedger | None = None,
        **litellm_options: Any,
    ) -> None:
        """A client for ``model`` (default ``llm.llm_model``); ``ConfigError`` when none is set."""
        model = model or llm.llm_model
        if not model:
            raise ConfigError("no LLM configured: set llm_model (HINDSIGHT_LLM_MODEL)")
        self.model: str = model
        self.ledger = ledger
        self._api_base = llm.llm_api_base
        self._api_key = llm.llm_api_key
        self._timeout_s = llm.llm_timeout_s
        self._max_retries = llm.llm_max_retries
        self._backoff_s = llm.llm_retry_backoff_s
        self._semaphore = asyncio.Semaphore(llm.llm_concurrency)
        self._options = litellm_options

    def for_model(self, model: str | None) -> LLMClient:
        """This client calling ``model`` instead (None: the same one), sharing its
        concurrency limit, ledger and options."""
        if not model or model == self.model:
            return self
        other = copy.copy(self)
        other.model = model
        return other

    async def complete_text(self, system: str, user: str, *, max_tokens: int | None = None) -> str:
        """The model's answer to ``user`` under the ``system`` prompt."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": self._timeout_s,
            "temperature": 0.0,
            "num_retries": 0,  # retries are ours, with our backoff and semaphore
            **self._options,
        }
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if self._api_base:
            kwargs["api_base"] = self._api_base
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key.get_secret_value()
        return await self._with_retries(kwargs)

    async def complete_json(
        self, system: str, user: str, schema_hint: str, *, max_tokens: int | None = 200
    ) -> dict[str, Any]:
        """The JSON object the model answers with; ``LLMOutputError`` if there is none.

        ``schema_hint`` (e.g. ``{"score": <0..1>, "reason": "<text>"}``) is
        appended to the system prompt. Callers validate the object's fields.
        """
        prompt = (
            f"{system}\n\nAnswer with one JSON object only, exactly of this form: {schema_hint}"
        )
        return parse_json_object(await self.complete_text(prompt, user, max_tokens=max_tokens))

    async def _with_retries(self, kwargs: dict[str, Any]) -> str:
        missing = missing_key(self.model, api_key=kwargs.get("api_key"), setting=_KEY_SETTING)
        if missing and "mock_response" not in kwargs:
            error = ProviderError(missing)
            error.retryable = False  # no key will appear meanwhile
            raise error
        charge = current_charge()
        ledger = self.ledger if charge is not None else None
        if ledger is not None and charge is not None and not await ledger.allows(charge.namespace):
            await ledger.skipped(charge)
            raise BudgetReached(
                f"namespace {charge.namespace!r} spent its daily LLM budget: "
                f"{charge.stage} uses its offline heuristic"
            )
        litellm = load_litellm()
        response = await self._answer(litellm, kwargs)
        # Outside the retries: a Redis error here is the worker's (the batch is retried),
        # not a provider failure to fall back from.
        if ledger is not None and charge is not None:
            await ledger.record(charge, usage_of(response, litellm))
        return _content(response)

    async def _answer(self, litellm: Any, kwargs: dict[str, Any]) -> Any:
        attempt = 0
        while True:
            try:
                async with self._semaphore:
                    # A hard guard in case a provider ignores litellm's timeout.
                    return await asyncio.wait_for(
                        litellm.acompletion(**kwargs), timeout=self._timeout_s * 2 + 1.0
                    )
            except Exception as e:
                retry = is_retryable(e) and attempt < self._max_retries
                logger.warning(
                    "LLM call to %s failed (attempt %d, %s): %s",
                    self.model,
                    attempt + 1,
                    "retrying" if retry else "giving up",
                    e,
                )
                if not retry:
                    error = ProviderError(f"LLM {self.model} failed: {type(e).__name__}: {e}")
                    error.retryable = is_retryable(e)
                    raise error from e
            await asyncio.sleep(self._backoff_s * 2**attempt)
            attempt += 1


def _content(response: Any) -> str:
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError) as e:
        raise LLMOutputError("model answer has no message content") from e
    if not isinstance(content, str):
        raise LLMOutputError("model answer has no text content")
    return content


class AnswerCache(Generic[Answer]):
    """A model's answers for the last ``entries`` texts it judged, least recently used out:
    a batch often repeats a text, and a batch retried after a crash repeats them all.
    ``entries`` 0 keeps none."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._answers: OrderedDict[str, Answer] = OrderedDict()

    @staticmethod
    def _key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def get(self, model: str, text: str) -> Answer | None:
        """``model``'s answer for ``text``, if kept."""
        key = self._key(model, text)
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    def put(self, model: str, text: str, answer: Answer) -> None:
        """Keep ``answer`` (the oldest goes past ``entries``)."""
        if self._entries <= 0:
            return
        self._answers[self._key(model, text)] = answer
        while len(self._answers) > self._entries:
            self._answers.popitem(last=False)
