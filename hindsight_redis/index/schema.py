"""The search index schema of a namespace, as data.

Pure module: no I/O. ``index_schema()`` returns a redisvl ``IndexSchema``;
``index.py`` creates it (adding the per-document language field redisvl
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
field (``documents.detect_language``: ``chinese`` when the text has Han
characters, else ``english``) and the index names it as its
``LANGUAGE_FIELD``, so Chinese memories are segmented into words (friso)
while English ones are stemmed, in the same index.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from redisvl.schema import IndexSchema

from hindsight_redis.core.keys import Keys

LANGUAGE_FIELD = "lang"
DEFAULT_LANGUAGE = "english"
TEXT_FIELD = "content"
# Tags that hold one value each use a separator no id contains, so a value
# such as "a|b" or "x,y" stays one tag and cannot widen a filter.
SINGLE_SEPARATOR = "\x1f"
MULTI_SEPARATOR = "|"
SINGLE_TAGS = (
    "namespace",
    "agent_id",
    "session_id",
    "task_type",
    "status",
    "visibility",
    "protected",
    "review",
    "refine",
)
# Only ``created_at`` (``since``/``until``, newest first) and ``occurred_at``
# (``occurred_since``/``occurred_until``, never sorted on) are queried. The
# retention scores read ``access_count``, ``last_accessed_at`` and
# ``write_score`` from the hash (exact values), so they are not indexed.
NUMERIC_FIELDS = ("created_at",)
OCCURRED_FIELD = "occurred_at"
"""Added after the first release: ``index_fields.add_missing`` adds it to older indexes."""


@functools.cache
def stopwords() -> tuple[str, ...]:
    """The index's stopwords: the 179-word NLTK English list (``data/stopwords.txt``)."""
    text = resources.files("hindsight_redis").joinpath("data", "stopwords.txt").read_text("utf-8")
    return tuple(w for w in (line.strip() for line in text.splitlines()) if w and w[0] != "#")


@functools.cache
def stopword_set() -> frozenset[str]:
    """``stopwords()`` as a set, for lookups."""
    return frozenset(stopwords())


# The contextual vector (``providers.contextual``), filled in by refiners; a
# memory's ``refine`` tag is ``pending`` until then, ``done`` after.
CONTEXT_FIELD = "ctx_vec"


def vector_field_name(generation: int) -> str:
    """The hash field holding a memory's vector for one index generation."""
    return f"vec_g{generation}"


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
    fields.append({"name": OCCURRED_FIELD, "type": "numeric"})
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
