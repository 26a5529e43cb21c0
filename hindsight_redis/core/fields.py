"""The names of a memory's fields in its hash and in the index, and how tags are joined.

Pure module: no I/O. The commit writes these fields (``documents``), the
index declares them (``index.schema``) and searches query them.
"""

from __future__ import annotations

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
    "provenance",
    "reviewed",
)
# Only ``created_at`` (``since``/``until``, newest first) and ``occurred_at``
# (``occurred_since``/``occurred_until``, never sorted on) are queried. The
# retention scores read ``access_count``, ``last_accessed_at`` and
# ``write_score`` from the hash (exact values), so they are not indexed.
CREATED_FIELD = "created_at"
NUMERIC_FIELDS = (CREATED_FIELD,)
OCCURRED_FIELD = "occurred_at"
"""Added after the first release: ``index.fields.add_missing`` adds it to older indexes."""
PROVENANCE_FIELD = "provenance"
"""How a memory's writer was identified (``token``, ``settings``, ``argument``); a tag."""
REVIEWED_FIELD = "reviewed"
"""``1`` once a person approved the memory (a held write's review); a tag."""
TRUSTED_PROVENANCE = ("token", "settings")
"""The provenances of identified writers: a token the service checked, or the identity
the process was configured with. A library caller's ``agent_id`` argument is a name
anyone with the library can give, so it is not one (``SearchOptions.trusted_only``)."""
# The contextual vector (``providers.contextual``), filled in by refiners; a
# memory's ``refine`` tag is ``pending`` until then, ``done`` after.
CONTEXT_FIELD = "ctx_vec"
REFINE_CHINESE = "chinese"
"""The ``refine`` state of a Chinese memory waiting for its multilingual vector (the
contextual model reads English only; ``providers.multilingual``)."""


def vector_field_name(generation: int) -> str:
    """The hash field holding a memory's vector for one index generation."""
    return f"vec_g{generation}"
