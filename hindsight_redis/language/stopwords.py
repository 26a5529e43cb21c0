"""The index's stopwords: words too common to select or score a memory.

Read once from the package's data (``data/stopwords.txt``): the 179-word NLTK
English list. The index is created with them (``index.schema``), the keyword
leg leaves them out of a query, and the fact comparison of two texts ignores them.
"""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def stopwords() -> tuple[str, ...]:
    """The index's stopwords: the 179-word NLTK English list (``data/stopwords.txt``)."""
    text = resources.files("hindsight_redis").joinpath("data", "stopwords.txt").read_text("utf-8")
    return tuple(w for w in (line.strip() for line in text.splitlines()) if w and w[0] != "#")


@functools.cache
def stopword_set() -> frozenset[str]:
    """``stopwords()`` as a set, for lookups."""
    return frozenset(stopwords())
