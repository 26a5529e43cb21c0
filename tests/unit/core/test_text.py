"""The one table of writing systems, and the modules that agree through it."""

from __future__ import annotations

import pytest

from hindsight_redis.core.documents import detect_language
from hindsight_redis.core.text import han_runs, has_han, is_cjk, mostly_cjk, script_of
from hindsight_redis.pipeline.stages.filter_config import load_filter_config
from hindsight_redis.pipeline.stages.rules import text_weight
from hindsight_redis.search.query import keyword_terms

EXTENSION_B = "\U00020000\U0002a6d6"  # two Han characters outside the BMP
EXTENSION_G = "\U00030000"


@pytest.mark.parametrize(
    ("ch", "script"),
    [
        ("a", "latin"),
        ("é", "latin"),
        ("ệ", "latin"),
        ("7", "digit"),
        ("٣", "digit"),
        ("α", "greek"),
        ("ἀ", "greek"),
        ("ж", "cyrillic"),
        ("中", "han"),
        ("㐀", "han"),
        ("豈", "han"),
        (EXTENSION_B[0], "han"),
        (EXTENSION_G, "han"),
        ("か", "kana"),
        ("カ", "kana"),
        ("ｶ", "kana"),
        ("한", "hangul"),
        ("ᄀ", "hangul"),
        ("א", "other"),
    ],
)
def test_script_of(ch: str, script: str) -> None:
    assert script_of(ch) == script


def test_detect_language() -> None:
    assert detect_language("用户喜欢用中文回答") == "chinese"
    assert detect_language("deploy billing 服务") == "chinese"
    assert detect_language("plain English text") == "english"


def test_a_document_tagged_chinese_gets_its_query_segmented() -> None:
    # The same characters must make a document Chinese and a query's Han run:
    # before one table, extension characters did the first but not the second.
    for text in ("部署", EXTENSION_B, "x" + EXTENSION_B + "y", EXTENSION_G):
        assert (detect_language(text) == "chinese") == bool(han_runs(text)) == has_han(text)
    assert han_runs("ab" + EXTENSION_B + " 中文") == [EXTENSION_B, "中文"]
    assert EXTENSION_B in keyword_terms("find " + EXTENSION_B)


def test_cjk_and_mostly_cjk() -> None:
    assert is_cjk("中") and is_cjk("か") and is_cjk("한") and not is_cjk("a")
    assert mostly_cjk("用户喜欢 tea") and not mostly_cjk("user likes 茶")


def test_rule_weights_use_the_same_table() -> None:
    config = load_filter_config(None)
    # Han weighs like three Latin letters wherever it is in Unicode
    assert text_weight("中" + EXTENSION_B, config) == 3 * text_weight("abc", config)
