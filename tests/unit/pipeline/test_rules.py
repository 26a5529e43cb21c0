"""Layer 1: rule filter (acks, emoji, too short, duplicates), config merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.errors import ConfigError
from hindsight_redis.pipeline.stages.base import Candidate
from hindsight_redis.pipeline.stages.filter_config import FilterConfig, load_filter_config
from hindsight_redis.pipeline.stages.rules import RuleFilter, check_rules


@pytest.fixture(scope="module")
def lists() -> FilterConfig:
    return load_filter_config()


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "OK!",
        "got it",
        "Thanks!",
        "sounds good 👍",
        "ok thanks",
        "好的",
        "明白了",
        "请继续",
        "收到",
        "嗯嗯",
        "好的，谢谢！",
        "vale, gracias",
        "D'accord, merci !",
        "Vielen Dank!",
        "了解しました",
        "알겠습니다",
        "Спасибо большое!",
        "Muito obrigado",
        "um, ok",
    ],
)
def test_drops_pure_acknowledgements(text: str, lists: FilterConfig) -> None:
    assert check_rules(text, lists) == "rule:ack"


@pytest.mark.parametrize(
    "text",
    [
        "ok, and my flight is on May 3",
        "好的，我的航班是5月3日",
        "2FA code is 4411",
        "我对花生过敏",
        "I'm vegan",
        "thanks, the deploy key is in vault/prod",
        "了解しました。会議は火曜日の午後3時です",
        "Okay so the API base is https://llm.internal:8080",
    ],
)
def test_keeps_acknowledgement_with_content(text: str, lists: FilterConfig) -> None:
    assert check_rules(text, lists) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no", "rule:too_short"),
        ("yes", "rule:ack"),
        ("Paris", "rule:too_short"),
        ("", "rule:too_short"),
        ("   \n", "rule:too_short"),
        ("👍👍🎉", "rule:emoji_only"),
        ("❤️", "rule:emoji_only"),
        ("...?!", "rule:punctuation_only"),
        ("——", "rule:punctuation_only"),
    ],
)
def test_drops_noise_with_its_reason(text: str, reason: str, lists: FilterConfig) -> None:
    assert check_rules(text, lists) == reason


def test_min_length_is_script_aware(lists: FilterConfig) -> None:
    # Two Han characters carry a meaning that two Latin letters do not.
    assert check_rules("我饿", lists) is None
    assert check_rules("ab", lists) == "rule:too_short"


def _candidate(entry_id: str, content: str, namespace: str = "ns") -> Candidate:
    event = MemoryEvent(event_id=entry_id, namespace=namespace, content=content)
    return Candidate(entry_id=entry_id, event=event, content=content)


@pytest.mark.asyncio
async def test_stage_drops_acks_and_duplicates_but_not_redeliveries(lists: FilterConfig) -> None:
    stage = RuleFilter(lists)
    batch = [
        _candidate("1-0", "The staging DB moved to db-7.internal"),
        _candidate("2-0", "the staging  DB moved to db-7.internal"),
        _candidate("3-0", "好的"),
        _candidate("4-0", "The staging DB moved to db-7.internal", namespace="other"),
    ]
    await stage.process(batch)
    assert [c.drop_reason for c in batch] == [None, "rule:duplicate", "rule:ack", None]
    assert "1-0" in batch[1].drop_detail
    redelivered = _candidate("1-0", "The staging DB moved to db-7.internal")
    await stage.process([redelivered])
    assert redelivered.alive


@pytest.mark.asyncio
async def test_stage_skips_candidates_already_dropped(lists: FilterConfig) -> None:
    candidate = _candidate("1-0", "ok")
    candidate.drop("score:low", "earlier")
    await RuleFilter(lists).process([candidate])
    assert candidate.drop_reason == "score:low"


def test_user_file_extends_lists_and_overrides_thresholds(tmp_path: Path) -> None:
    user = tmp_path / "filters.toml"
    user.write_text('[thresholds]\nmin_weight = 12\n[acks]\nen = ["ship it"]\nnl = ["bedankt"]\n')
    config = load_filter_config(user)
    assert check_rules("Ship it!", config) == "rule:ack"
    assert check_rules("bedankt", config) == "rule:ack"
    assert check_rules("ok", config) == "rule:ack"  # built-in list still there
    assert check_rules("I'm vegan", config) == "rule:too_short"  # 7 < 12


def test_example_config_file_loads() -> None:
    example = Path(__file__).parents[3] / "config" / "filters.toml"
    config = load_filter_config(example)
    assert check_rules("sgtm", config) == "rule:ack"


def test_bad_user_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[acks]\nen = 3\n")
    with pytest.raises(ConfigError):
        load_filter_config(bad)
    with pytest.raises(ConfigError):
        load_filter_config(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Caroline: Thanks!", "rule:ack"),
        ("用户: 好的", "rule:ack"),
        ("Mel: ok, and my flight is on May 3", None),
        ("Dr. Wu: 👍", "rule:emoji_only"),
    ],
)
def test_a_speaker_label_does_not_hide_an_acknowledgement(
    text: str, reason: str | None, lists: FilterConfig
) -> None:
    assert check_rules(text, lists) == reason
