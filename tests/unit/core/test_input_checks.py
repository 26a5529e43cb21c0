"""The pure checks at the edge: text that is not text, numbers beyond floats, secrets shown."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_redis.core.checks import check_search, check_timeout, finite_number, search_filters
from hindsight_redis.core.requests import parse_write
from hindsight_redis.core.text import text_problem
from hindsight_redis.errors import InvalidMemory, InvalidQuery, shown
from hindsight_redis.index.filters import escape_tag
from hindsight_redis.ops.doctor import exposure_problem, loopback_only
from hindsight_redis.settings import redact_url


def _event(**fields: object) -> object:
    return parse_write(
        {"content": "a fact worth keeping", **fields},
        namespace="ns",
        max_content_chars=100,
        max_tags=4,
    ).event


def test_text_problem_names_lone_surrogates_and_optionally_control_characters() -> None:
    assert text_problem("ｂｉｌｌｉｎｇ \U0001f600 a\x00b") is None  # controls are text
    assert "lone surrogate (U+D800 at 2)" in (text_problem("ab\ud800") or "")
    assert "control character (U+0000 at 1)" in (text_problem("a\x00", controls=False) or "")
    assert "U+001F" in (text_problem("a\x1fb", controls=False) or "")
    assert text_problem("a\u00a0b\u2028", controls=False) is None  # not C0 controls


def test_numbers_beyond_a_float_are_not_finite() -> None:
    assert finite_number(10**400) is None and finite_number(float("nan")) is None
    assert finite_number(True) is None and finite_number("1") is None
    assert finite_number(10**30) == 1e30 and finite_number(-0.5) == -0.5


def test_shown_values_are_short_and_never_raise() -> None:
    assert shown(10**5000) == "<an int too long to show>"
    assert len(shown("x" * 10**6)) == 60 and shown("x" * 10**6).endswith("...")
    assert shown(5) == "5"


def test_writes_refuse_text_that_is_not_text_and_numbers_beyond_floats() -> None:
    for fields, message in [
        ({"content": "a fact \ud800 worth keeping"}, "content holds a lone surrogate"),
        ({"agent_id": "x\x00"}, "agent_id holds a control character"),
        ({"session_id": "s\x1fother"}, "session_id holds a control character"),
        ({"tags": ["ops\x00"]}, "tag holds a control character"),
        ({"tags": ["a|b"]}, "which separates tags"),
        ({"source": "\udcff"}, "source holds a lone surrogate"),
        ({"idempotency_key": "k\ud83d"}, "idempotency_key holds a lone surrogate"),
        ({"importance": 10**400}, "importance must be between 0 and 1"),
        ({"half_life_days": 10**400}, "half_life_days must be > 0"),
    ]:
        with pytest.raises(InvalidMemory, match=re.escape(message)):
            _event(**fields)
    with pytest.raises(InvalidMemory, match="timeout_s must be a finite number"):
        check_timeout(10**400, 1.0)
    event = _event(content="NUL \x00 and \x1f stay in content", source="a\tb")
    assert event.content == "NUL \x00 and \x1f stay in content"  # type: ignore[attr-defined]


def test_searches_refuse_what_no_filter_can_match() -> None:
    with pytest.raises(InvalidQuery, match="query holds a lone surrogate"):
        check_search("billing \udfff", 5, "hybrid")
    with pytest.raises(InvalidQuery, match="got <an int too long to show>"):
        check_search("billing", 10**5000, "hybrid")
    with pytest.raises(InvalidQuery, match=r"got 'xxx.*\.\.\.$"):
        check_search("billing", 5, "x" * 10**6)
    for filters, message in [
        ({"tags": ["ops"] * 65}, "65 tags given, limit is 64"),
        ({"tags": ["a\x00"]}, "tag holds a control character"),
        ({"agent_id": "x" * 257}, "agent_id is 257 characters"),
        ({"session_id": "\ud800"}, "session_id holds a lone surrogate"),
        ({"since": 10**400}, "since must be a finite number"),
        ({"since": 10, "until": 5}, "since (10.0) is after until (5.0)"),
    ]:
        with pytest.raises(InvalidQuery, match=re.escape(message)):
            search_filters(**filters)
    assert search_filters(tags=[" ops ", "x"]).tags == ("ops", "x")  # stripped like a write's


@given(st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=40))
def test_an_escaped_tag_has_no_bare_operator(value: str) -> None:
    escaped = escape_tag(value)
    bare = re.sub(r"\\.", "", escaped, flags=re.DOTALL)  # drop every escaped pair
    assert all(ch.isalnum() or ch == "_" for ch in bare), escaped


def test_doctor_flags_only_a_server_open_beyond_loopback() -> None:
    assert loopback_only("127.0.0.1 -::1") and loopback_only("localhost")
    assert not loopback_only("") and not loopback_only("* -::*") and not loopback_only("0.0.0.0")
    open_ = exposure_problem("0.0.0.0", protected=False, passwordless=True)
    assert open_ is not None and "HINDSIGHT_REDIS_PASSWORD" in open_ and "0.0.0.0" in open_
    assert exposure_problem("", protected=False, passwordless=True) is not None  # every address
    assert exposure_problem("0.0.0.0", protected=True, passwordless=True) is None
    assert exposure_problem("0.0.0.0", protected=False, passwordless=False) is None
    assert exposure_problem("127.0.0.1 ::1", protected=False, passwordless=True) is None


def test_urls_lose_their_credentials_when_shown() -> None:
    assert redact_url("redis://user:pw@host:6379/0") == "redis://***@host:6379/0"
    assert redact_url("rediss://:p@ss@host/0") == "rediss://***@host/0"
    assert redact_url("redis://host:6379/0?x=a@b") == "redis://host:6379/0?x=a@b"
    assert redact_url("unix:///tmp/redis.sock") == "unix:///tmp/redis.sock"
    assert redact_url("redis://:pa/ss@host:1/0") == "redis://***@host:1/0"  # unencoded '/'
