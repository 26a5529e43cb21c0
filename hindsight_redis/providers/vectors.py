"""The embedder protocol, and the helpers every embedder shares.

Pure: no I/O. Embedders return L2-normalised float32 vectors (``Vectors``);
how they are stored is ``core.vectors``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from hindsight_redis.core.vectors import Vectors

EmbedFn = Callable[..., Awaitable[Any]]


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


@runtime_checkable
class LearnsDims(Protocol):
    """An embedder whose dimension may be unknown until it has embedded something."""

    def learn_dims(self, dims: int) -> None:
        """Take ``dims`` as the dimension (checked against every later reply)."""
        ...

    async def probe_dims(self) -> int:
        """Find the dimension by embedding one short text."""
        ...


async def resolve_dims(embedder: Embedder, recorded: int | None = None) -> int:
    """The embedder's dimension: known, else ``recorded`` (the index's, for this
    model), else probed with one embedding call."""
    from hindsight_redis.errors import EmbeddingError

    try:
        return embedder.dims
    except EmbeddingError:
        if not isinstance(embedder, LearnsDims):
            raise
    if recorded is not None:
        embedder.learn_dims(recorded)
        return recorded
    return await embedder.probe_dims()


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


def text_list(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list; ``TypeError`` for a bare string."""
    # A bare str is a Sequence[str] too; embedding it char by char is never meant.
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single str: wrap it in a list")
    return list(texts)


def mean_pooled(hidden: npt.NDArray[Any], mask: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The mean of each text's token vectors (``hidden``: batch x tokens x dims), padding
    (``mask`` 0) excluded: a transformer's sentence vector, before normalising."""
    summed = (hidden * mask[..., None]).sum(axis=1)
    return np.asarray(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1))
