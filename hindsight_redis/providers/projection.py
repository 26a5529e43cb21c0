"""Contextual vectors stored in fewer dimensions: a PCA basis shipped with the package.

MiniLM's 384-dim vectors keep about 95% of their energy in their first 256
principal directions (on texts the basis was not fitted on), and LoCoMo
held-out recall moves by at most 0.003 when the index stores them so: 530
bytes less per memory (docs/decisions.md, "Contextual vectors on 256 of their 384 directions"). An
index's record names its ``context_projection``: ``""`` stores the model's
vectors as they are (every index built before projections existed),
``"pca<k>"`` stores each one projected on the first ``k`` directions of
``minilm/pca_basis.npy`` and renormalised. Query vectors are projected the
same way before a KNN or a cosine, so only the index record decides, as it
does for the datatype.

The basis was fitted on MiniLM vectors (``tools/context_projection.py``)
and applies to that model only (``BASIS_MODEL``); any other contextual model stores its
vectors whole. Pure: the basis file is read once per ``k``, nothing else.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np

from hindsight_redis.core.vectors import Vectors
from hindsight_redis.providers.contextual import MODEL_ID as BASIS_MODEL
from hindsight_redis.providers.vectors import normalize_rows

BASIS_PATH = Path(__file__).resolve().parent / "minilm" / "pca_basis.npy"
_NAME = re.compile(r"pca([1-9][0-9]*)")


def projection_for(model_id: str, dims: int, stored_dims: int) -> str:
    """The projection a new index uses for contextual vectors of ``model_id``.

    ``stored_dims``: the configured ``contextual_stored_dims``; ``""`` (whole
    vectors) when it is not below ``dims`` or the model has no basis.
    """
    if model_id != BASIS_MODEL or stored_dims >= dims or stored_dims <= 0:
        return ""
    return f"pca{stored_dims}"


def stored_dims(projection: str, dims: int) -> int:
    """The dimensions a vector field holds under ``projection`` (``dims`` without one)."""
    if not projection:
        return dims
    found = _NAME.fullmatch(projection)
    if found is None:
        raise ValueError(f"unknown contextual projection {projection!r}: expected 'pca<k>'")
    return int(found.group(1))


@functools.cache
def _basis(k: int) -> Vectors:
    basis = np.load(BASIS_PATH)
    if not 0 < k <= basis.shape[1]:
        raise ValueError(f"the contextual basis has {basis.shape[1]} directions, not {k}")
    return np.ascontiguousarray(basis[:, :k], dtype=np.float32)


def project(vectors: Vectors, projection: str) -> Vectors:
    """``vectors`` (rows, unit length) as an index of ``projection`` stores them."""
    if not projection:
        return vectors
    k = stored_dims(projection, vectors.shape[1])
    return normalize_rows(np.asarray(vectors, dtype=np.float32) @ _basis(k))
