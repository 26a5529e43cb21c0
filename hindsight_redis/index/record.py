"""The record of a namespace's live index (``Keys.index_meta``), read and written.

The record names the index's generation, its name and static vector field,
the embedding models and dimensions, and how each vector field stores its
vectors (``datatype``, ``context_datatype``: float32 or float16). A record
written before datatypes were recorded names none: its fields are float32
(``LEGACY_DATATYPE``), and the index keeps being read and written that way.
Likewise ``context_projection`` (``providers.projection``): a record without
one stores the contextual model's vectors whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from hindsight_redis.core.fields import vector_field_name
from hindsight_redis.core.keys import Keys
from hindsight_redis.core.resp import as_text
from hindsight_redis.core.vectors import LEGACY_DATATYPE
from hindsight_redis.errors import redis_errors
from hindsight_redis.providers.projection import projection_for, stored_dims
from hindsight_redis.providers.vectors import Embedder


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """The live index of a namespace, as recorded in ``Keys.index_meta``.

    ``datatype`` and ``context_datatype``: how the static and the contextual
    vector fields store their vectors; every vector written to the index or
    sent to a KNN on it is encoded so (``providers.vectors.vector_bytes``).
    ``context_projection``: how contextual vectors are projected before that
    (``providers.projection``; ``""``: whole); ``context_dims`` stays the
    model's dimension, ``context_field_dims`` is the field's.
    """

    name: str
    alias: str
    generation: int
    vector_field: str
    model_id: str
    dims: int
    context_model: str = ""
    context_dims: int = 0
    datatype: str = LEGACY_DATATYPE
    context_datatype: str = LEGACY_DATATYPE
    context_projection: str = ""

    @property
    def has_context(self) -> bool:
        """True when the index has the contextual vector field."""
        return self.context_dims > 0

    @property
    def context_field_dims(self) -> int:
        """The dimensions the contextual vector field holds (after the projection); 0: none."""
        return stored_dims(self.context_projection, self.context_dims) if self.has_context else 0


def info_from_meta(keys: Keys, meta: Mapping[str, str]) -> IndexInfo:
    """The ``IndexInfo`` of a record (which has a ``generation``)."""
    generation = int(meta["generation"])
    return IndexInfo(
        name=meta.get("name") or keys.index_name(generation),
        alias=keys.index_alias,
        generation=generation,
        vector_field=meta.get("vector_field") or vector_field_name(generation),
        model_id=meta["model_id"],
        dims=int(meta["dims"]),
        context_model=meta.get("context_model", ""),
        context_dims=int(meta.get("context_dims") or 0),
        datatype=meta.get("datatype") or LEGACY_DATATYPE,
        context_datatype=meta.get("context_datatype") or LEGACY_DATATYPE,
        context_projection=meta.get("context_projection") or "",
    )


def context_record(contextual: Embedder | None, datatype: str, stored: int) -> dict[str, str]:
    """The record's fields of the contextual vector, stored as ``datatype`` in
    ``stored`` dimensions where the model has a basis for it (``contextual_stored_dims``;
    0: whole)."""
    if contextual is None:
        return {"context_model": "", "context_dims": "0", "context_projection": ""}
    return {
        "context_model": contextual.model_id,
        "context_dims": str(contextual.dims),
        "context_datatype": datatype,
        "context_projection": projection_for(contextual.model_id, contextual.dims, stored),
    }


def mismatch_message(recorded: IndexInfo, model_id: str, dims: int) -> str:
    """What an ``EmbeddingMismatch`` says: recorded, given, and the fix."""
    return (
        f"index {recorded.alias} was built with embedding model "
        f"{recorded.model_id!r} ({recorded.dims} dims), but the embedder given is "
        f"{model_id!r} ({dims} dims); use the same embedder, or rebuild the index "
        f"with: hindsight-redis reindex --embedder {model_id}"
    )


def context_mismatch_message(recorded: IndexInfo, contextual: Embedder) -> str:
    """What an ``EmbeddingMismatch`` on the contextual vector says."""
    return (
        f"index {recorded.alias} holds contextual vectors of {recorded.context_model!r} "
        f"({recorded.context_dims} dims), but the contextual embedder given is "
        f"{contextual.model_id!r} ({contextual.dims} dims); configure the same "
        "contextual_embedder, or rebuild the index with: hindsight-redis reindex"
    )


async def recorded_index(redis: Redis, keys: Keys) -> IndexInfo | None:
    """The namespace's live index as recorded in ``Keys.index_meta``; None before one exists."""
    with redis_errors("read the index record"):
        raw = await redis.hgetall(keys.index_meta)
    return info_from_reply(keys, raw)


def info_from_reply(keys: Keys, raw: Mapping[Any, Any]) -> IndexInfo | None:
    """The ``IndexInfo`` of an ``HGETALL`` of ``Keys.index_meta``; None before one exists."""
    meta = {as_text(k): as_text(v) for k, v in raw.items()}
    return info_from_meta(keys, meta) if "generation" in meta else None
