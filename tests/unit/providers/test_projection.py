"""The contextual projection: names, dimensions, the shipped basis (pure)."""

from __future__ import annotations

import numpy as np
import pytest

from hindsight_redis.providers.projection import (
    BASIS_MODEL,
    BASIS_PATH,
    project,
    projection_for,
    stored_dims,
)
from hindsight_redis.providers.vectors import normalize_rows


def test_only_the_basis_model_below_its_dims_is_projected() -> None:
    assert projection_for(BASIS_MODEL, 384, 256) == "pca256"
    assert projection_for(BASIS_MODEL, 384, 384) == ""
    assert projection_for(BASIS_MODEL, 384, 0) == ""
    assert projection_for("litellm:text-embedding-3-small", 1536, 256) == ""


def test_stored_dims() -> None:
    assert stored_dims("", 384) == 384
    assert stored_dims("pca192", 384) == 192
    for bad in ("pca", "pca0", "pca-3", "svd256"):
        with pytest.raises(ValueError, match="unknown contextual projection"):
            stored_dims(bad, 384)


def test_the_basis_is_orthonormal_strongest_first() -> None:
    basis = np.load(BASIS_PATH)
    assert basis.shape == (384, 384)
    np.testing.assert_allclose(basis.T @ basis, np.eye(384), atol=1e-4)


def test_projected_vectors_are_unit_and_keep_cosines_in_the_span() -> None:
    rng = np.random.default_rng(0)
    basis = np.load(BASIS_PATH)[:, :256]
    inside = normalize_rows(rng.normal(size=(5, 256)) @ basis.T)  # vectors in the span
    out = project(inside, "pca256")
    assert out.shape == (5, 256)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(out @ out.T, inside @ inside.T, atol=1e-5)
    assert project(inside, "") is inside
    with pytest.raises(ValueError, match="385"):
        project(normalize_rows(rng.normal(size=(1, 385))), "pca385")
