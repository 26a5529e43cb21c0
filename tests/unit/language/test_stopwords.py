"""The stopwords: the index's English list, and the Chinese function words a query drops."""

from __future__ import annotations

import pytest

from hindsight_redis.language.stopwords import is_han_stopword, stopword_set


@pytest.mark.parametrize("word", ["的", "我", "我们", "什么", "什么时候", "哪些", "一个", "在哪"])
def test_function_and_question_words_are_chinese_stopwords(word: str) -> None:
    assert is_han_stopword(word)


@pytest.mark.parametrize("word", ["牙", "猫", "上午", "最后", "不吃", "停车", "数据库", "喜欢"])
def test_content_words_are_not(word: str) -> None:
    assert not is_han_stopword(word)


def test_the_english_list_is_unchanged() -> None:
    assert "the" in stopword_set() and len(stopword_set()) == 179
