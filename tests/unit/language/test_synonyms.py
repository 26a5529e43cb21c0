"""Chinese synonyms from the Cilin thesaurus: the table, its limits, the missing data."""

from __future__ import annotations

from importlib import metadata

import pytest

from hindsight_redis.language import synonyms
from hindsight_redis.language.synonyms import (
    MAX_GROUP,
    PER_QUERY,
    PER_WORD,
    ThesaurusMissing,
    expand,
    synonym_groups,
    synonym_table,
)
from hindsight_redis.search.query import keyword_query


def test_words_expand_to_their_cilin_synonyms() -> None:
    assert expand(["座位"]) == ["位子", "席位", "坐位"]
    assert "告警" in expand(["报警"])
    assert "中文" in expand(["汉语"])


def test_a_language_name_expands_to_its_other_name() -> None:
    assert expand(["日文"])[0] == "日语"
    assert expand(["英语"])[0] == "英文"


def test_english_words_and_unknown_words_have_none() -> None:
    assert expand(["coffee", "report"]) == []
    assert expand(["字节跳动"]) == []


def test_only_synonym_groups_of_several_characters_are_kept() -> None:
    tree = {
        "A": {
            "sub": {
                "01=": ["报告", "汇报", "报"],
                "02#": ["报告", "呈文"],
                "03@": ["报告"],
                "04=": ["报告", *(f"词{n}" for n in range(MAX_GROUP))],
            }
        }
    }
    table = synonym_table(synonym_groups(tree))
    assert table["报告"] == ("汇报",)
    assert "报" not in table


def test_expansion_keeps_to_its_limits() -> None:
    words = [f"词{n}" for n in range(20)]
    table = {w: tuple(f"{w}同{k}" for k in range(5)) for w in words}
    rows = synonym_table([["甲乙", *(f"丙{c}" for c in "丁戊己庚辛")]])
    assert len(rows["甲乙"]) == PER_WORD
    found = expand(words, table)
    assert len(found) == PER_QUERY == len(set(found))
    assert found[:3] == ["词0同0", "词0同1", "词0同2"]
    assert expand(["词0", "词0同0"], table)[0] == "词0同1"  # a query word is not its synonym


def test_missing_thesaurus_data_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    synonyms.synonyms.cache_clear()
    monkeypatch.setattr(synonyms.metadata, "distribution", not_installed)
    with pytest.raises(ThesaurusMissing, match="cilin"):
        expand(["座位"])
    synonyms.synonyms.cache_clear()


def test_synonyms_score_half_in_the_plain_union_and_select_under_a_filter() -> None:
    assert keyword_query(["座位", "位子"], None, synonyms={"位子"}) == (
        "@content:(座位 | (位子 | 位子)=>{$weight: 0.25})"
    )
    filtered = keyword_query(["座位", "位子"], "@a:{x} @b:{y}", synonyms={"位子"})
    assert filtered == (
        "~@content:座位 (@content:(座位 | (位子 | 位子)=>{$weight: 0.25}))=>{$weight: 0.5}"
        " (@a:{x} @b:{y})=>{$weight: 0.0}"
    )
    common = keyword_query(["座位", "位子"], None, common={"位子"}, synonyms={"位子"})
    assert common == "~@content:座位 (@content:(座位))=>{$weight: 0.5}"
