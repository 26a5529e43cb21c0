"""The embed stage: one batched embedding call for the alive candidates."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from hindsight_redis.errors import EmbeddingError
from hindsight_redis.pipeline.stages.base import Candidate, alive
from hindsight_redis.providers.embedders import Embedder

logger = logging.getLogger(__name__)


class EmbedStage:
    """Sets ``candidate.embedding`` (float32, unit length) for every alive candidate."""

    name = "embed"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Embed the content of the alive candidates of ``batch`` in one call."""
        todo = alive(batch)
        if not todo:
            return
        vectors = await self.embedder.embed([c.content for c in todo])
        if vectors.shape != (len(todo), self.embedder.dims):
            raise EmbeddingError(
                f"embedder {self.embedder.model_id} returned shape {vectors.shape}, "
                f"expected ({len(todo)}, {self.embedder.dims})"
            )
        for candidate, vector in zip(todo, vectors, strict=True):
            candidate.embedding = np.asarray(vector, dtype=np.float32)
