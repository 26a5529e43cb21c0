"""The embedder protocol, the helpers every embedder shares, and vectors as stored bytes.

Pure: no I/O. Embedders return float32; an index stores its vector fields as
``float32`` or ``float16`` (``VECTOR_DATATYPES``, recorded per field in the
index record). ``vector_bytes`` is the one place a vector becomes the bytes
a hash field holds or a KNN query sends; ``datatype_of`` and
``vectors_from_bytes`` read them back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
EmbedFn = Callable[..., Awaitable[Any]]

# Little-endian, as RediSearch reads a vector blob. float16 keeps unit-vector
# cosines within about 1e-3 (bfloat16, with 3 bits less mantissa, is not offered).
_DTYPES: dict[str, np.dtype[Any]] = {"float32": np.dtype("<f4"), "float16": np.dtype("<f2")}
VECTOR_DATATYPES = tuple(_DTYPES)
"""The datatypes an index may store its vectors as."""
LEGACY_DATATYPE = "float32"
"""The datatype of a vector field whose index record names none (built by earlier releases)."""


def _dtype(datatype: str) -> np.dtype[Any]:
    try:
        return _DTYPES[datatype]
    except KeyError:
        raise ValueError(
            f"vector datatype {datatype!r} is not one of {', '.join(VECTOR_DATATYPES)}"
        ) from None


def vector_bytes(vector: npt.ArrayLike, datatype: str) -> bytes:
    """``vector`` as the bytes a vector field (or a KNN query) of ``datatype`` takes."""
    return np.asarray(vector, dtype=_dtype(datatype)).tobytes()


def vectors_from_bytes(raws: Sequence[bytes], datatype: str) -> Vectors:
    """Stored vectors of one ``datatype`` and size, as the rows of a float32 matrix."""
    flat = np.frombuffer(b"".join(raws), dtype=_dtype(datatype))
    return flat.astype(np.float32).reshape(len(raws), -1)


def datatype_of(raw: bytes, dims: int) -> str | None:
    """The datatype of a stored vector of ``dims`` dimensions, told by its size; None
    when the size fits none (another model's vector, or none)."""
    for name, dtype in _DTYPES.items():
        if len(raw) == dims * dtype.itemsize:
            return name
    return None


def convert_vector(raw: bytes, source: str, target: str) -> bytes:
    """A stored vector of datatype ``source`` re-encoded as ``target``."""
    if source == target:
        return raw
    return vector_bytes(vectors_from_bytes([raw], source)[0], target)


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
