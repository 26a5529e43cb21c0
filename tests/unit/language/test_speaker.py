"""A chat turn's speaker label: left out of its content, read by the search."""

from __future__ import annotations

from hindsight_redis.language.speaker import speaker_label, strip_speaker_label


def test_the_label_is_read_and_stripped() -> None:
    assert speaker_label("Caroline: ok thanks") == "Caroline"
    assert speaker_label("John Smith: I moved in 2019") == "John Smith"
    assert speaker_label("张伟: 我喜欢游泳") == "张伟"
    assert strip_speaker_label("Caroline: ok thanks") == "ok thanks"


def test_text_without_a_label_has_none() -> None:
    assert speaker_label("the deploy failed: ERR_CONN_RESET") is None
    assert speaker_label("no label here") is None
    assert strip_speaker_label("no label here") == "no label here"
