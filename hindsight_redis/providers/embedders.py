"""Embedding providers: text in, L2-normalised float32 vectors out.

Three embedders share one protocol:

- ``HashEmbedder``: feature hashing of words and character n-grams; no model,
  deterministic, for tests.
- ``LocalEmbedder``: the offline default, a static multilingual model
  distilled from multilingual-e5-small (``tools/distill_static.py``):
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
import re
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hindsight_redis.core.vectors import Vectors
from hindsight_redis.errors import ConfigError, EmbeddingError
from hindsight_redis.providers.litellm_embedder import LiteLLMEmbedder
from hindsight_redis.providers.vectors import (
    Embedder,
    EmbedFn,
    LearnsDims,
    normalize_rows,
    text_list,
)

__all__ = [
    "CachedEmbedder",
    "EmbedFn",
    "Embedder",
    "HashEmbedder",
    "LiteLLMEmbedder",
    "LocalEmbedder",
    "Vectors",
    "contextual_from_settings",
    "embedder_from_settings",
    "make_embedder",
    "normalize_rows",
]

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from hindsight_redis.settings import EmbeddingSettings

logger = logging.getLogger(__name__)


STATIC_MODEL_DIR = Path(__file__).resolve().parent / "static_model"
_THREAD_OFFLOAD_TEXTS = 512  # local batches larger than this run in a worker thread
_WORD_RE = re.compile(r"\w+", re.UNICODE)


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
        texts = text_list(texts)
        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``."""
        return self.embed_sync(texts)


# -------------------------------------------------------------------- local


class LocalEmbedder:
    """Offline static multilingual embedder (no torch, no network).

    ``relevance_floor``: a search hit needs at least this cosine unless
    another leg vouches for it (LoCoMo dev: no recall lost at 0.45; nonsense
    queries return almost nothing; docs/decisions.md, "Honest results: relevance floors").

    Each token has a precomputed vector (int8 rows with a per-row scale); a
    text's vector is the normalised sum over its tokens. Weights load lazily
    on first use from ``model_dir`` (default: the copy shipped in the package).
    """

    relevance_floor = 0.45
    cross_language_floor = 0.25

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

    def warm(self) -> None:
        """Load the model now (blocking), not on the first ``embed``."""
        self._load()

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (blocking; well over 10,000 short texts/s on one core)."""
        texts = text_list(texts)
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
    def relevance_floor(self) -> float:
        """The wrapped embedder's cosine floor for search hits (-1: none)."""
        return float(getattr(self.inner, "relevance_floor", -1.0))

    @property
    def cross_language_floor(self) -> float:
        """The wrapped embedder's floor for hits in another script than the query."""
        return float(getattr(self.inner, "cross_language_floor", self.relevance_floor))

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
        texts = text_list(texts)
        if not texts:
            return await self.inner.embed(texts)
        found, missing = self._split(texts)
        fresh = await self.inner.embed(missing) if missing else np.zeros((0, 0), dtype=np.float32)
        return self._merge(texts, found, missing, fresh)

    def clear(self) -> None:
        """Forget every cached vector."""
        self._items.clear()

    def learn_dims(self, dims: int) -> None:
        """Pass a learnt dimension on to the wrapped embedder (see ``vectors.LearnsDims``)."""
        if isinstance(self.inner, LearnsDims):
            self.inner.learn_dims(dims)

    async def probe_dims(self) -> int:
        """Probe the wrapped embedder's dimension (see ``vectors.LearnsDims``)."""
        if isinstance(self.inner, LearnsDims):
            return await self.inner.probe_dims()
        return self.inner.dims


# ------------------------------------------------------------------ factory


def make_embedder(name: str, **options: Any) -> Embedder:
    """Build an embedder by name: ``"hash"``, ``"local"`` (the default), ``"minilm"``
    (contextual, ``providers.contextual``) or ``"litellm:<model>"``.

    ``options`` go to the embedder's constructor. Unknown names raise
    ``ConfigError`` (a ``ValueError``).
    """
    kind, _, model = name.partition(":")
    if kind == "hash" and not model:
        return HashEmbedder(**options)
    if kind == "local" and not model:
        return LocalEmbedder(**options)
    if kind == "minilm" and not model:
        from hindsight_redis.providers.contextual import MiniLMEmbedder

        return MiniLMEmbedder(**options)
    if kind == "litellm":
        if not model:
            raise ConfigError(
                "litellm embedder needs a model: 'litellm:<model>', "
                "e.g. 'litellm:text-embedding-3-small'"
            )
        return LiteLLMEmbedder(model, **options)
    raise ConfigError(
        f"unknown embedder {name!r}: expected 'hash', 'local', 'minilm' or 'litellm:<model>'"
    )


def embedder_from_settings(embedding: EmbeddingSettings) -> Embedder:
    """The embedder named by ``embedding.embedder``, with its provider options."""
    options: dict[str, object] = {}
    if embedding.embedder.startswith("litellm:"):
        if embedding.embedding_api_base:
            options["api_base"] = embedding.embedding_api_base
        if embedding.embedding_api_key is not None:
            options["api_key"] = embedding.embedding_api_key.get_secret_value()
        options["batch_size"] = embedding.embedding_batch_size
        options["dims"] = embedding.embedding_dims
    return make_embedder(embedding.embedder, **options)


def draft_from_settings(embedding: EmbeddingSettings) -> Embedder | None:
    """The refiner's draft embedder (``contextual_drafts``): MiniLM's int8 graph, one text
    per run, at the lowest CPU priority; None for other contextual models or without drafts."""
    if embedding.contextual_embedder != "minilm" or not embedding.contextual_drafts:
        return None
    return make_embedder(
        "minilm", threads=embedding.contextual_threads, int8_graph=True, low_priority=True
    )


def prepare_query_model(
    embedding: EmbeddingSettings, announce: Callable[[str], object] | None = None
) -> Path | None:
    """Build, once, the int8 query graph the searchers of ``embedding`` load (about 5 s, then
    cached), so that no user's first search waits for it; ``announce`` is told before a
    build. Its path; None when searches use none (or it cannot be built: they then use the
    full graph, with one warning)."""
    if embedding.contextual_embedder != "minilm" or not embedding.contextual_query_int8:
        return None
    from hindsight_redis.providers.contextual import default_model_path
    from hindsight_redis.providers.query_graph import cached_path, query_graph

    model = default_model_path()
    if announce is not None and not cached_path(model).is_file():
        announce("preparing the search model (once, about 5 s)")
    return query_graph(model)


def contextual_from_settings(
    embedding: EmbeddingSettings, *, for_queries: bool = False
) -> Embedder | None:
    """The contextual embedder of ``embedding.contextual_embedder``; None for ``"none"``.

    Any embedder name works as the contextual one (e.g. ``litellm:<model>``).
    ``for_queries``: the searcher's (MiniLM: its int8 graph when
    ``contextual_query_int8``); else the refiner's, whose model runs at the
    lowest CPU priority (ingest and searches come first).
    """
    name = embedding.contextual_embedder
    if name == "none":
        return None
    if name == "minilm":
        return make_embedder(
            name,
            threads=embedding.contextual_threads,
            int8_graph=for_queries and embedding.contextual_query_int8,
            low_priority=not for_queries,
        )
    return embedder_from_settings(embedding.model_copy(update={"embedder": name}))
