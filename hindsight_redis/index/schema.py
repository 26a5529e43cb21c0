"""The search index schema of a namespace, as data.

Pure module: no I/O. ``index_schema()`` returns a redisvl ``IndexSchema``;
``index.manager`` creates it (adding the per-document language field redisvl
cannot express).

One index per namespace, not one index with a namespace tag:

* the keys of a namespace share one hash-tagged prefix (``Keys.doc_prefix``),
  so the index's ``PREFIX`` is exactly the namespace's memories;
* each namespace may use its own embedding model and dimension, and
  ``reindex`` rebuilds one namespace without touching the others;
* HNSW graphs stay per namespace: a KNN never walks another pool's vectors,
  and pre-filtering does not have to discard them;
* dropping or re-indexing a namespace is one ``FT.DROPINDEX`` / alias swap.

The ``namespace`` tag is still indexed, and always filtered on, as a guard.

Languages: RediSearch splits text on spaces and punctuation, which leaves a
Chinese sentence as one giant token. Each memory hash carries a ``lang``
field (``core.documents.detect_language``: ``chinese`` when the text has Han
characters, else ``english``) and the index names it as its
``LANGUAGE_FIELD``, so Chinese memories are segmented into words (friso)
while English ones are stemmed, in the same index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hindsight_redis.core.fields import (
    CONTEXT_FIELD,
    MULTI_SEPARATOR,
    NUMERIC_FIELDS,
    OCCURRED_FIELD,
    SINGLE_SEPARATOR,
    SINGLE_TAGS,
    TEXT_FIELD,
    vector_field_name,
)
from hindsight_redis.core.keys import Keys
from hindsight_redis.language.stopwords import stopwords

if TYPE_CHECKING:
    from redisvl.schema import IndexSchema


def index_schema(
    keys: Keys,
    *,
    generation: int,
    dims: int,
    hnsw_m: int = 16,
    context_hnsw_m: int = 8,
    hnsw_ef_construction: int = 200,
    hnsw_ef_runtime: int = 64,
    context_dims: int = 0,
    datatype: str = "float16",
    context_datatype: str = "float16",
) -> IndexSchema:
    """The redisvl schema of the namespace's index of one generation.

    ``context_dims`` > 0 adds the contextual vector field ``CONTEXT_FIELD``.
    ``datatype`` and ``context_datatype``: how the static and the contextual
    vectors are stored (``providers.vectors.VECTOR_DATATYPES``); ``hnsw_m``
    and ``context_hnsw_m``: their HNSW graphs' degrees.
    """
    fields: list[dict[str, Any]] = [
        {"name": TEXT_FIELD, "type": "text", "attrs": {"weight": 1.0}},
    ]
    for name in SINGLE_TAGS:
        fields.append(
            {
                "name": name,
                "type": "tag",
                "attrs": {"separator": SINGLE_SEPARATOR, "case_sensitive": True},
            }
        )
    fields.append(
        {
            "name": "tags",
            "type": "tag",
            "attrs": {"separator": MULTI_SEPARATOR, "case_sensitive": True},
        }
    )
    for name in NUMERIC_FIELDS:
        fields.append({"name": name, "type": "numeric", "attrs": {"sortable": True}})
    # INDEXMISSING: ``ismissing(@occurred_at)`` selects the undated memories (data format 2).
    fields.append({"name": OCCURRED_FIELD, "type": "numeric", "attrs": {"index_missing": True}})
    hnsw = {
        "algorithm": "hnsw",
        "distance_metric": "cosine",
        "ef_construction": hnsw_ef_construction,
        "ef_runtime": hnsw_ef_runtime,
    }
    vectors = [(vector_field_name(generation), dims, datatype, hnsw_m)]
    if context_dims > 0:
        vectors.append((CONTEXT_FIELD, context_dims, context_datatype, context_hnsw_m))
    for name, size, kind, m in vectors:
        attrs = {**hnsw, "m": m, "dims": size, "datatype": kind}
        fields.append({"name": name, "type": "vector", "attrs": attrs})
    from redisvl.schema import IndexSchema  # 0.15 s to import: only to build an index

    return IndexSchema.from_dict(
        {
            "index": {
                "name": keys.index_name(generation),
                "prefix": keys.doc_prefix,
                "key_separator": ":",
                "storage_type": "hash",
                "stopwords": list(stopwords()),
            },
            "fields": fields,
        }
    )
