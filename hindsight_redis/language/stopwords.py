"""The index's stopwords: words too common to select or score a memory.

Read once from the package's data (``data/stopwords.txt``): the 179-word NLTK
English list. The index is created with them (``index.schema``), the keyword
leg leaves them out of a query, and the fact comparison of two texts ignores them.
``is_han_stopword`` tells the Chinese function words a query's segmented words leave out.
"""

from __future__ import annotations

import functools
from importlib import resources

from hindsight_redis.core.text import is_han_word


@functools.cache
def stopwords() -> tuple[str, ...]:
    """The index's stopwords: the 179-word NLTK English list (``data/stopwords.txt``)."""
    text = resources.files("hindsight_redis").joinpath("data", "stopwords.txt").read_text("utf-8")
    return tuple(w for w in (line.strip() for line in text.splitlines()) if w and w[0] != "#")


@functools.cache
def stopword_set() -> frozenset[str]:
    """``stopwords()`` as a set, for lookups."""
    return frozenset(stopwords())


# Chinese function words: particles, pronouns, copulas, prepositions, measure words and the
# words of a question. The index keeps every word friso segments (its stopword list is the
# English one); a query leaves these out of its keyword terms, where they would select and
# score memories for "我" or "什么" alone.
_HAN_STOP_CHARS = frozenset(
    "的地得了着过是在有和与及或也都就还又要会能可把被让给对从向到于为以之其这那此个些"
    "我你您他她它们谁吗呢吧啊呀哦嘛么什怎啥哪几多少一上里中不没很最该请"
)
_HAN_STOP_WORDS = frozenset(
    {
        "时候",
        "什么时候",
        "哪天",
        "哪一天",
        "几时",
        "多久",
        "多长",
        "多长时间",
        "时间",
        "为什么",
        "如何",
        "怎样",
        "是否",
        "是不是",
        "有没有",
        "可以",
        "应该",
        "需要",
        "知道",
        "告诉",
        "一下",
        "现在",
        "平时",
        "一般",
        "东西",
        "事情",
        "情况",
        "问题",
        "方面",
        "这样",
        "那样",
        "自己",
        "大家",
    }
)


def is_han_stopword(word: str) -> bool:
    """Whether a Chinese word is a function word or a question's word (``什么``,
    ``我的``, ``什么时候``): one of a list, or made of function characters only."""
    return word in _HAN_STOP_WORDS or all(ch in _HAN_STOP_CHARS for ch in word)


def han_content_chars(text: str) -> int:
    """How many Han characters of ``text`` are not function characters (的, 了, 我...)."""
    return sum(1 for ch in text if ch not in _HAN_STOP_CHARS and is_han_word(ch))
