"""Vectors as stored bytes: the one place a vector becomes what a hash field holds.

Pure: no I/O. Embedders return float32; an index stores its vector fields as
``float32`` or ``float16`` (``VECTOR_DATATYPES``, recorded per field in the
index record). ``vector_bytes`` is the one place a vector becomes the bytes
a hash field holds or a KNN query sends; ``datatype_of`` and
``vectors_from_bytes`` read them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
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
