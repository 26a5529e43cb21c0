"""How an index is defined: the one this release builds, the one a server holds, and how
they differ.

Pure module: ``expected_definition`` reads the field arguments ``index.schema`` gives
``FT.CREATE``, ``live_definition`` an ``FT.INFO`` reply (RESP2 list or RESP3 map). Both
become the same small description of each non-vector field (type, separator, flags)
and the stopword list. Vector fields are left out: their layout (dimension, datatype,
HNSW degree) belongs to the index record and changes only with ``reindex``, which
re-embeds; a difference here is one a rebuild over the same vectors can fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hindsight_redis.core.resp import as_text, reply_map

# The field options a rebuild would change (``UNF`` follows ``SORTABLE``; weights are not
# compared: the schema has one text field, whose weight orders nothing).
_FLAGS = frozenset({"SORTABLE", "CASESENSITIVE", "INDEXMISSING", "INDEXEMPTY", "NOSTEM", "NOINDEX"})
_FLAGS |= {"WITHSUFFIXTRIE", "PHONETIC"}


@dataclass(frozen=True, slots=True)
class FieldDefinition:
    """One non-vector field of an index: its type, tag separator (``""``: none) and flags."""

    type: str
    separator: str = ""
    flags: frozenset[str] = frozenset()

    def __str__(self) -> str:
        parts = [self.type, *sorted(self.flags)]
        if self.separator:
            parts.insert(1, f"SEPARATOR {self.separator!r}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Definition:
    """The non-vector fields of an index by name, and its stopwords."""

    fields: dict[str, FieldDefinition]
    stopwords: frozenset[str]

    def differences(self, live: Definition) -> list[str]:
        """What ``live`` lacks or has otherwise than this definition, one line each (``[]``:
        the same)."""
        found = []
        for name, wanted in sorted(self.fields.items()):
            have = live.fields.get(name)
            if have is None:
                found.append(f"field {name}: missing")
            elif have != wanted:
                found.append(f"field {name}: {have}, now {wanted}")
        for name in sorted(set(live.fields) - set(self.fields)):
            found.append(f"field {name}: no longer in the schema")
        if live.stopwords != self.stopwords:
            found.append(f"stopwords: {len(live.stopwords)}, now {len(self.stopwords)}")
        return found


def _field(tokens: Sequence[str]) -> FieldDefinition:
    """A field from its type and option tokens (``TAG SEPARATOR x CASESENSITIVE``...)."""
    separator = ""
    for i, token in enumerate(tokens[:-1]):
        if token.upper() == "SEPARATOR":
            separator = tokens[i + 1]
    return FieldDefinition(
        type=tokens[0].upper(),
        separator=separator,
        flags=frozenset(t.upper() for t in tokens[1:] if t.upper() in _FLAGS),
    )


def expected_definition(
    field_args: Iterable[Sequence[Any]], stopwords: Iterable[str]
) -> Definition:
    """The definition of the ``FT.CREATE`` field arguments ``field_args`` (each: the name,
    then the type and options, as redis-py's ``Field.redis_args()``) and ``stopwords``."""
    fields = {}
    for args in field_args:
        tokens = [as_text(a) if isinstance(a, bytes | str) else str(a) for a in args]
        if tokens[1].upper() != "VECTOR":
            fields[tokens[0]] = _field(tokens[1:])
    return Definition(fields=fields, stopwords=frozenset(stopwords))


def _attribute_tokens(attribute: Any) -> Iterator[tuple[str, str | None]]:
    """(key, value) pairs of an ``FT.INFO`` attribute; flags come as (flag, None). RESP3
    gives a map with a ``flags`` list, RESP2 a flat list with the flags among the pairs."""
    if isinstance(attribute, dict):
        for key, value in attribute.items():
            if as_text(key) == "flags":
                for flag in value or ():
                    yield as_text(flag), None
            else:
                yield as_text(key), as_text(value) if isinstance(value, bytes | str) else str(value)
        return
    items = [as_text(x) if isinstance(x, bytes | str) else str(x) for x in attribute]
    i = 0
    while i < len(items):
        if items[i].upper() in _FLAGS or items[i].upper() == "UNF":
            yield items[i], None
            i += 1
        else:
            yield items[i], items[i + 1] if i + 1 < len(items) else None
            i += 2


def live_definition(info: Any) -> Definition:
    """The definition of the index an ``FT.INFO`` reply describes."""
    raw = reply_map(info)
    fields = {}
    for attribute in raw.get("attributes") or ():
        pairs = list(_attribute_tokens(attribute))
        values = {key.lower(): value for key, value in pairs if value is not None}
        kind = (values.get("type") or "").upper()
        if kind == "VECTOR":
            continue
        flags = frozenset(key.upper() for key, value in pairs if value is None) & _FLAGS
        name = values.get("attribute") or values.get("identifier") or ""
        fields[name] = FieldDefinition(
            type=kind, separator=values.get("separator") or "", flags=flags
        )
    stopwords = frozenset(as_text(w) for w in raw.get("stopwords_list") or ())
    return Definition(fields=fields, stopwords=stopwords)
