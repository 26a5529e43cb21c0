"""Remote embeddings through litellm: any provider, batched, limited, retried."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import SecretStr

from hindsight_redis.core.vectors import Vectors
from hindsight_redis.errors import ConfigError, EmbeddingError
from hindsight_redis.providers.credentials import missing_key
from hindsight_redis.providers.litellm_import import load_litellm
from hindsight_redis.providers.retries import is_retryable
from hindsight_redis.providers.vectors import EmbedFn, normalize_rows, text_list

logger = logging.getLogger(__name__)


class _NoRetries(int):
    """A 0 that litellm keeps: its OpenAI embedding path reads ``max_retries or
    DEFAULT_MAX_RETRIES`` (litellm issue 7003), so a plain 0 lets the SDK make three
    requests, with its own backoff, for every attempt of ours."""

    def __bool__(self) -> bool:
        return True


_NO_SDK_RETRIES = _NoRetries(0)


def _default_embed_fn() -> EmbedFn:
    fn: EmbedFn = load_litellm().aembedding
    return fn


def _response_vectors(response: Any, expected: int) -> Vectors:
    data = response["data"] if isinstance(response, Mapping) else response.data
    items = sorted(data, key=lambda d: d["index"] if isinstance(d, Mapping) else d.index)
    rows = [d["embedding"] if isinstance(d, Mapping) else d.embedding for d in items]
    if len(rows) != expected:
        raise EmbeddingError(f"provider returned {len(rows)} vectors for {expected} texts")
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2 or not np.isfinite(matrix).all():
        raise EmbeddingError(f"provider returned malformed vectors (shape {matrix.shape})")
    return matrix


class LiteLLMEmbedder:
    """Remote embeddings through ``litellm.aembedding`` (OpenAI, Azure, Ollama, ...).

    Texts are sent in batches of ``batch_size``, at most ``max_concurrency``
    requests at a time; retryable failures (timeouts, connection errors, 429,
    5xx) are retried ``max_retries`` times with jittered exponential backoff,
    then raised as ``EmbeddingError``. ``dims`` is given or learnt from the
    first response. ``extra`` is passed through to litellm (e.g.
    ``{"dimensions": 512}`` or ``{"mock_response": [...]}``).
    """

    def __init__(
        self,
        model: str,
        *,
        dims: int | None = None,
        api_base: str | None = None,
        api_key: str | SecretStr | None = None,
        batch_size: int = 128,
        max_concurrency: int = 4,
        max_retries: int = 3,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 8.0,
        timeout_s: float = 30.0,
        extra: Mapping[str, Any] | None = None,
        embed_fn: EmbedFn | None = None,
    ) -> None:
        if batch_size < 1 or max_concurrency < 1 or max_retries < 0:
            raise ConfigError("batch_size and max_concurrency must be >= 1, max_retries >= 0")
        self._model = model
        self._dims = dims
        self._api_base = api_base
        self._api_key = api_key
        self._batch = batch_size
        self._concurrency = max_concurrency
        self._retries = max_retries
        self._backoff = (backoff_initial_s, backoff_max_s)
        self._timeout_s = timeout_s
        self._extra = dict(extra or {})
        self._embed_fn = embed_fn
        self._sems: dict[int, asyncio.Semaphore] = {}

    @property
    def model_id(self) -> str:
        """``litellm:<model>``."""
        return f"litellm:{self._model}"

    @property
    def dims(self) -> int:
        """Vector dimension: as given, learnt from a response, or from litellm's model table."""
        if self._dims is None:
            self._dims = self._known_dims()
        if self._dims is None:
            raise EmbeddingError(
                f"dimension of {self.model_id} unknown: pass dims=, or await probe_dims() first"
            )
        return self._dims

    def _known_dims(self) -> int | None:
        requested = self._extra.get("dimensions")
        if isinstance(requested, int):
            return requested
        if self._embed_fn is not None:
            return None
        self._require_key()
        try:
            size = load_litellm().get_model_info(self._model).get("output_vector_size")
        except Exception:  # litellm raises for models missing from its table
            return None
        return int(size) if isinstance(size, int) else None

    def learn_dims(self, dims: int) -> None:
        """Take ``dims`` as the dimension (every reply is checked against it)."""
        if dims < 1:
            raise ConfigError(f"dimension must be positive, got {dims}")
        self._dims = dims

    async def probe_dims(self) -> int:
        """Learn the dimension by embedding one short text (one provider call, if unknown)."""
        if self._dims is None:
            await self.embed(["dimension probe"])
        return self.dims

    def _semaphore(self) -> asyncio.Semaphore:
        # One per event loop: asyncio primitives cannot be shared across loops.
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._sems:
            self._sems = {loop_id: asyncio.Semaphore(self._concurrency)}
        return self._sems[loop_id]

    def _kwargs(self, batch: Sequence[str]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self._model,
            "input": list(batch),
            "timeout": self._timeout_s,
        }
        kwargs["max_retries"] = _NO_SDK_RETRIES  # retries are ours, not the SDK's
        if self._api_base:
            kwargs["api_base"] = self._api_base
        if isinstance(self._api_key, SecretStr):
            kwargs["api_key"] = self._api_key.get_secret_value()
        elif self._api_key:
            kwargs["api_key"] = self._api_key
        kwargs.update(self._extra)
        return kwargs

    def _delay_s(self, attempt: int) -> float:
        initial, ceiling = self._backoff
        return float(min(ceiling, initial * 2.0**attempt) * random.uniform(0.5, 1.0))

    def _require_key(self) -> None:
        """``EmbeddingError`` (not retryable) naming the variable to set when the provider
        needs a key and has none: said before litellm is imported (seconds) or asked."""
        if self._embed_fn is not None or "mock_response" in self._extra:
            return
        missing = missing_key(
            self._model, api_key=self._api_key, setting="HINDSIGHT_EMBEDDING_API_KEY"
        )
        if missing:
            error = EmbeddingError(f"{missing} (not retryable)")
            error.retryable = False
            raise error

    async def _call(self, batch: Sequence[str]) -> Vectors:
        self._require_key()
        fn = self._embed_fn or _default_embed_fn()
        for attempt in range(self._retries + 1):
            try:
                async with self._semaphore():
                    response = await fn(**self._kwargs(batch))
                return _response_vectors(response, len(batch))
            except EmbeddingError:
                raise
            except Exception as e:
                if not is_retryable(e):
                    err = EmbeddingError(
                        f"{self.model_id} failed (not retryable): {type(e).__name__}: {e}"
                    )
                    err.retryable = False
                    raise err from e
                if attempt == self._retries:
                    raise EmbeddingError(
                        f"{self.model_id} failed after {attempt + 1} attempts: "
                        f"{type(e).__name__}: {e}"
                    ) from e
                delay = self._delay_s(attempt)
                logger.warning(
                    "%s: %s, retry %d in %.2fs", self.model_id, type(e).__name__, attempt + 1, delay
                )
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in concurrent batches."""
        texts = text_list(texts)
        if not texts:
            return np.zeros((0, self._dims or 0), dtype=np.float32)
        batches = [texts[i : i + self._batch] for i in range(0, len(texts), self._batch)]
        try:
            # A TaskGroup cancels the other batches as soon as one has failed for good.
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._call(b)) for b in batches]
        except ExceptionGroup as eg:
            raise eg.exceptions[0]  # noqa: B904 - keeps the batch error's own cause
        matrix = np.vstack([t.result() for t in tasks])
        if self._dims is None:
            self._dims = int(matrix.shape[1])
        elif matrix.shape[1] != self._dims:
            raise EmbeddingError(
                f"{self.model_id} returned {matrix.shape[1]} dims, expected {self._dims}"
            )
        return normalize_rows(matrix)
