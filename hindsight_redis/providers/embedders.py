"""Embedding providers: text in, L2-normalised float32 vectors out.

Three embedders share one protocol:

- ``HashEmbedder``: feature hashing of words and character n-grams; no model,
  deterministic, for tests.
- ``LocalEmbedder``: the offline default, a static multilingual model
  distilled from multilingual-e5-small (``benchmarks/distill_static.py``):
  one vector per token, summed and normalised; numpy + ``tokenizers`` only.
- ``LiteLLMEmbedder``: any provider through ``litellm.aembedding``, batched,
  concurrency-limited and retried with backoff.

``CachedEmbedder`` wraps any of them with an LRU+TTL cache for the search path,
and ``make_embedder`` builds one from a name ("hash", "local", "litellm:<model>").
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from pydantic import SecretStr

from hindsight_redis.errors import ConfigError, EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
EmbedFn = Callable[..., Awaitable[Any]]

STATIC_MODEL_DIR = Path(__file__).resolve().parent / "static_model"
_THREAD_OFFLOAD_TEXTS = 512  # local batches larger than this run in a worker thread
_WORD_RE = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, batched."""

    @property
    def model_id(self) -> str:
        """Stable identifier recorded in the index, e.g. ``"local:static-e5-multilingual-256"``."""
        ...

    @property
    def dims(self) -> int:
        """Vector dimension."""
        ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``: shape ``(len(texts), dims)``, float32, rows of unit length."""
        ...

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Blocking ``embed`` (must not be called from a running event loop for remote models)."""
        ...


def normalize_rows(matrix: npt.NDArray[Any]) -> Vectors:
    """Return float32 rows scaled to unit length; all-zero rows become the uniform unit vector."""
    out = np.asarray(matrix, dtype=np.float32).copy()
    if out.size == 0:
        return out
    norms = np.linalg.norm(out, axis=1)
    zero = norms < 1e-12
    if zero.any():
        # A text with no usable features still gets a valid (if uninformative) unit vector.
        out[zero] = 1.0 / np.sqrt(out.shape[1])
        norms[zero] = 1.0
    out /= norms[:, None]
    return out


def _text_list(texts: Sequence[str]) -> list[str]:
    # A bare str is a Sequence[str] too; embedding it char by char is never meant.
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single str: wrap it in a list")
    return list(texts)


# --------------------------------------------------------------------- hash


class HashEmbedder:
    """Deterministic feature-hashing embedder (words + character n-grams), for tests.

    Works for unspaced scripts too: character 1-3-grams carry Chinese. Same
    text, same vector, on every machine and Python version (crc32, not ``hash``).
    """

    def __init__(self, dims: int = 256, char_ngrams: tuple[int, ...] = (1, 2, 3)) -> None:
        if dims < 8:
            raise ConfigError(f"HashEmbedder dims must be >= 8, got {dims}")
        self._dims = dims
        self._ngrams = char_ngrams

    @property
    def model_id(self) -> str:
        """``hash:v1-<dims>``."""
        return f"hash:v1-{self._dims}"

    @property
    def dims(self) -> int:
        """Vector dimension."""
        return self._dims

    def _features(self, text: str) -> list[tuple[str, float]]:
        feats: list[tuple[str, float]] = []
        for word in _WORD_RE.findall(text.lower()):
            feats.append(("w:" + word, 1.0))
            padded = f" {word} "
            for n in self._ngrams:
                feats.extend(
                    (f"c{n}:" + padded[i : i + n], 0.5) for i in range(len(padded) - n + 1)
                )
        return feats

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        vec = np.zeros(self._dims, dtype=np.float32)
        for feat, weight in self._features(text):
            h = zlib.crc32(feat.encode("utf-8"))
            vec[h % self._dims] += weight if (h >> 31) & 1 else -weight
        return vec

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (blocking, cheap)."""
        texts = _text_list(texts)
        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``."""
        return self.embed_sync(texts)


# -------------------------------------------------------------------- local


class LocalEmbedder:
    """Offline static multilingual embedder (no torch, no network).

    Each token has a precomputed vector (int8 rows with a per-row scale); a
    text's vector is the normalised sum over its tokens. Weights load lazily
    on first use from ``model_dir`` (default: the copy shipped in the package).
    """

    def __init__(self, model_dir: str | Path | None = None, max_tokens: int = 512) -> None:
        self._dir = Path(model_dir) if model_dir is not None else STATIC_MODEL_DIR
        self._max_tokens = max_tokens
        self._config: dict[str, Any] | None = None
        self._model: tuple[Tokenizer, npt.NDArray[np.int8], npt.NDArray[np.float32]] | None = None
        self._lock = threading.Lock()

    def _read_config(self) -> dict[str, Any]:
        if self._config is None:
            path = self._dir / "config.json"
            try:
                self._config = dict(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as e:
                raise EmbeddingError(f"static model config unreadable at {path}: {e}") from e
        return self._config

    @property
    def model_id(self) -> str:
        """``local:<model name>``, e.g. ``local:static-e5-multilingual-256``."""
        return f"local:{self._read_config()['name']}"

    @property
    def dims(self) -> int:
        """Vector dimension."""
        return int(self._read_config()["dims"])

    def _load(self) -> tuple[Tokenizer, npt.NDArray[np.int8], npt.NDArray[np.float32]]:
        with self._lock:
            if self._model is None:
                from tokenizers import Tokenizer

                try:
                    tok = Tokenizer.from_file(str(self._dir / "tokenizer.json"))
                    # int8 rows stay memory-mapped: workers on one host share the pages.
                    rows = np.load(self._dir / "embeddings.npy", mmap_mode="r", allow_pickle=False)
                    scales = np.load(self._dir / "scales.npy", allow_pickle=False)
                except Exception as e:  # tokenizers raises plain Exception
                    raise EmbeddingError(f"cannot load static model from {self._dir}: {e}") from e
                tok.enable_truncation(self._max_tokens)
                tok.no_padding()
                self._model = (tok, rows, scales.astype(np.float32))
                logger.info("loaded static model %s (%d tokens)", self.model_id, len(rows))
            return self._model

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (blocking; well over 10,000 short texts/s on one core)."""
        texts = _text_list(texts)
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        tok, rows, scales = self._load()
        # encode_batch_fast (tokenizers >= 0.20) skips offsets, which a static model never needs.
        encode = getattr(tok, "encode_batch_fast", tok.encode_batch)
        encodings = encode(texts, add_special_tokens=False)
        out = np.empty((len(texts), rows.shape[1]), dtype=np.float32)
        for i, enc in enumerate(encodings):
            ids = enc.ids
            out[i] = scales[ids] @ rows[ids]  # sum of dequantised token rows
        return normalize_rows(out)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; large batches run in a worker thread to keep the loop responsive."""
        if len(texts) > _THREAD_OFFLOAD_TEXTS:
            return await asyncio.to_thread(self.embed_sync, texts)
        return self.embed_sync(texts)


# ------------------------------------------------------------------ litellm

_RETRYABLE_NAMES = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "Timeout",
        "RateLimitError",
        "ServiceUnavailableError",
        "InternalServerError",
        "BadGatewayError",
    }
)


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if type(exc).__name__ in _RETRYABLE_NAMES:
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)


def _default_embed_fn() -> EmbedFn:
    # The local cost map avoids a network fetch when litellm is first imported.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    fn: EmbedFn = litellm.aembedding
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
        _default_embed_fn()  # imports litellm with the local model table
        import litellm

        try:
            size = litellm.get_model_info(self._model).get("output_vector_size")
        except Exception:  # litellm raises for models missing from its table
            return None
        return int(size) if isinstance(size, int) else None

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
        kwargs["max_retries"] = 0  # retries are ours, not the SDK's
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

    async def _call(self, batch: Sequence[str]) -> Vectors:
        fn = self._embed_fn or _default_embed_fn()
        for attempt in range(self._retries + 1):
            try:
                async with self._semaphore():
                    response = await fn(**self._kwargs(batch))
                return _response_vectors(response, len(batch))
            except EmbeddingError:
                raise
            except Exception as e:
                if not _is_retryable(e):
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
        texts = _text_list(texts)
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

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Blocking ``embed``; not for use inside a running event loop."""
        return asyncio.run(self.embed(texts))


# -------------------------------------------------------------------- cache


class CachedEmbedder:
    """LRU cache with TTL in front of any embedder, keyed by ``(model_id, text)``.

    Meant for the search path, where the same queries repeat. ``hits`` and
    ``misses`` count lookups.
    """

    def __init__(
        self,
        inner: Embedder,
        max_items: int = 1024,
        ttl_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self._max = max_items
        self._ttl_s = ttl_s
        self._clock = clock
        self._items: OrderedDict[tuple[str, str], tuple[float, npt.NDArray[np.float32]]] = (
            OrderedDict()
        )
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        """The wrapped embedder's id."""
        return self.inner.model_id

    @property
    def dims(self) -> int:
        """The wrapped embedder's dimension."""
        return self.inner.dims

    def _get(self, key: tuple[str, str], now: float) -> npt.NDArray[np.float32] | None:
        item = self._items.get(key)
        if item is None or item[0] <= now:
            self._items.pop(key, None)
            return None
        self._items.move_to_end(key)
        return item[1]

    def _put(self, key: tuple[str, str], vector: npt.NDArray[np.float32], now: float) -> None:
        self._items[key] = (now + self._ttl_s, vector)
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)

    def _split(self, texts: Sequence[str]) -> tuple[dict[int, npt.NDArray[np.float32]], list[str]]:
        now, mid = self._clock(), self.inner.model_id
        found: dict[int, npt.NDArray[np.float32]] = {}
        missing: list[str] = []
        for i, text in enumerate(texts):
            vec = self._get((mid, text), now)
            if vec is not None:
                found[i] = vec
                self.hits += 1
            else:
                self.misses += 1
                if text not in missing:
                    missing.append(text)
        return found, missing

    def _merge(
        self,
        texts: Sequence[str],
        found: dict[int, npt.NDArray[np.float32]],
        missing: list[str],
        fresh: Vectors,
    ) -> Vectors:
        now, mid = self._clock(), self.inner.model_id
        by_text = {t: fresh[j].copy() for j, t in enumerate(missing)}
        for text, vec in by_text.items():
            self._put((mid, text), vec, now)
        rows = [found[i] if i in found else by_text[t] for i, t in enumerate(texts)]
        return np.stack(rows).astype(np.float32, copy=False)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``, computing only those not cached."""
        texts = _text_list(texts)
        if not texts:
            return await self.inner.embed(texts)
        found, missing = self._split(texts)
        fresh = await self.inner.embed(missing) if missing else np.zeros((0, 0), dtype=np.float32)
        return self._merge(texts, found, missing, fresh)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Blocking ``embed``."""
        texts = _text_list(texts)
        if not texts:
            return self.inner.embed_sync(texts)
        found, missing = self._split(texts)
        fresh = self.inner.embed_sync(missing) if missing else np.zeros((0, 0), dtype=np.float32)
        return self._merge(texts, found, missing, fresh)

    def clear(self) -> None:
        """Forget every cached vector."""
        self._items.clear()


# ------------------------------------------------------------------ factory


def make_embedder(name: str, **options: Any) -> Embedder:
    """Build an embedder by name: ``"hash"``, ``"local"`` (the default) or ``"litellm:<model>"``.

    ``options`` go to the embedder's constructor. Unknown names raise
    ``ConfigError`` (a ``ValueError``).
    """
    kind, _, model = name.partition(":")
    if kind == "hash" and not model:
        return HashEmbedder(**options)
    if kind == "local" and not model:
        return LocalEmbedder(**options)
    if kind == "litellm":
        if not model:
            raise ConfigError(
                "litellm embedder needs a model: 'litellm:<model>', "
                "e.g. 'litellm:text-embedding-3-small'"
            )
        return LiteLLMEmbedder(model, **options)
    raise ConfigError(f"unknown embedder {name!r}: expected 'hash', 'local' or 'litellm:<model>'")
