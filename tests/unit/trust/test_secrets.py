"""Secrets and personal data found and masked: the labelled set (tests/data/secrets.jsonl)
meets its targets, look-alikes stay as written, masking is idempotent, and the cheap
look that spares most texts the detectors never spares one that holds a secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.trust.formats import card_prefix_ok, cn_id_ok, luhn_ok
from hindsight_redis.trust.secrets import (
    find_secrets,
    mask_secrets,
    might_hold_secret,
    might_hold_secrets,
    scan_event,
    screen_fields,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "secrets.jsonl"
ROWS: list[dict[str, Any]] = [
    json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line
]
SECRETS = [r for r in ROWS if r["label"] == "secret"]
BENIGN = [r for r in ROWS if r["label"] == "benign"]


def _caught(row: dict[str, Any]) -> bool:
    masked, kinds = mask_secrets(row["text"])
    return bool(kinds) and not any(secret in masked for secret in row["secrets"])


def test_the_labelled_set_is_large_and_varied() -> None:
    assert len(ROWS) >= 80
    assert {r["lang"] for r in SECRETS} == {"en", "zh"} == {r["lang"] for r in BENIGN}
    kinds = {r["kind"] for r in SECRETS}
    for kind in ("aws-key", "google-key", "azure-key", "github-token", "slack-token"):
        assert kind in kinds
    for kind in ("stripe-key", "openai-key", "sendgrid-key", "jwt", "private-key"):
        assert kind in kinds
    for kind in ("url-credentials", "password", "card-number", "ssn", "token"):
        assert kind in kinds
    looks = {r["kind"] for r in BENIGN}
    for kind in ("git-sha", "uuid", "image-digest", "semver", "order-number", "isbn"):
        assert kind in looks
    assert {"talk-password", "talk-key"} <= looks


def test_recall_and_false_positives_meet_their_targets() -> None:
    missed = [r["text"] for r in SECRETS if not _caught(r)]
    changed = [r["text"] for r in BENIGN if mask_secrets(r["text"])[0] != r["text"]]
    assert 1 - len(missed) / len(SECRETS) >= 0.95, missed
    assert len(changed) / len(BENIGN) <= 0.03, changed


@pytest.mark.parametrize("name", ["secrets_fresh.jsonl", "secrets_heldout2.jsonl"])
def test_the_sets_written_apart_from_the_detector_meet_the_targets(name: str) -> None:
    """Two sets written after the detector, in other styles (first found 0.927 and 0.867 of
    their secrets: docs/decisions.md); every kind of the issue, in English and Chinese."""
    rows = [json.loads(line) for line in (DATA.parent / name).read_text("utf-8").splitlines()]
    secrets = [r for r in rows if r["label"] == "secret"]
    benign = [r for r in rows if r["label"] == "benign"]
    assert len(secrets) >= 80 and len(benign) >= 80
    assert {r["lang"] for r in secrets} == {"en", "zh"} == {r["lang"] for r in benign}
    missed = [r["text"] for r in secrets if not _caught(r)]
    changed = [r["text"] for r in benign if mask_secrets(r["text"])[0] != r["text"]]
    assert 1 - len(missed) / len(secrets) >= 0.95, missed
    assert len(changed) / len(benign) <= 0.03, changed


@pytest.mark.parametrize("row", SECRETS, ids=lambda r: f"{r['kind']}:{r['text'][:30]}")
def test_no_byte_of_a_secret_survives_masking(row: dict[str, Any]) -> None:
    masked, kinds = mask_secrets(row["text"])
    assert kinds, row["text"]
    for secret in row["secrets"]:
        assert secret not in masked, (secret, masked)


def test_placeholders_name_the_kind_and_keep_the_words_around() -> None:
    key = "AKIA" + "Q" * 12 + "7X2P"
    masked, kinds = mask_secrets(f"the deploy key is {key}, rotate it monthly")
    assert masked == "the deploy key is [secret:aws-key], rotate it monthly"
    assert kinds == ("aws-key",)
    masked, _ = mask_secrets("WiFi 密码：Tr0ub4dor&3，访客用")
    assert masked == "WiFi 密码：[secret:password]，访客用"
    assert mask_secrets("the password is wrong") == ("the password is wrong", ())


@given(st.sampled_from([r["text"] for r in ROWS]), st.text(max_size=40))
def test_masking_twice_changes_nothing_more(text: str, extra: str) -> None:
    once, _ = mask_secrets(text + extra)
    assert mask_secrets(once) == (once, ())


@given(st.lists(st.one_of(st.sampled_from([r["text"] for r in ROWS]), st.text(max_size=60))))
def test_the_cheap_look_never_spares_a_secret(texts: list[str]) -> None:
    for text in texts:
        if find_secrets(text) or any(r["text"] == text for r in SECRETS):
            assert might_hold_secret(text)
    suspects = set(might_hold_secrets(texts))
    assert {n for n, text in enumerate(texts) if might_hold_secret(text)} <= suspects


def test_a_batch_looks_at_each_text_from_its_start() -> None:
    texts = ["we met yesterday", "pwd: qwerty123", "ok", "pass: hunter22", "Ana: 5 cats"]
    assert might_hold_secrets(texts) == [1, 3]
    assert might_hold_secrets([*texts[:1], "-----BEGIN RSA PRIVATE KEY-----"]) == [1]


def test_most_conversation_is_spared_the_detectors() -> None:
    talk = [
        r["text"]
        for r in BENIGN
        if r["kind"] == "other" and not any(c.isdigit() or c == "@" for c in r["text"])
    ]
    assert talk and not any(might_hold_secret(t) for t in talk)
    assert not might_hold_secret("Caroline: I went to a support group yesterday, so powerful.")
    assert not might_hold_secret("We passed the exam and I'm passionate about it")


def test_every_field_of_a_write_is_screened_and_identifiers_are_not() -> None:
    token = "ghp_" + "a1B2" * 9
    fields = {
        "content": "deployed the release",
        "context": f"earlier: use {token} for CI",
        "source": f"https://ci.example.com/?token={token}",
        "tags": ["ci", f"token:{token}"],
        "agent_id": "ops",
    }
    screened = screen_fields(fields)
    assert screened is not None
    masked, kinds = screened
    assert kinds == ("github-token",)
    assert token not in json.dumps(masked) and masked["agent_id"] == "ops"
    assert masked["content"] == "deployed the release"
    assert screen_fields({"content": "nothing to see", "tags": ["a"]}) is None


def test_an_event_from_the_stream_is_masked_field_by_field() -> None:
    event = MemoryEvent(
        event_id="e1",
        namespace="n",
        content="my SSN is 536-22-8726",
        source="form",
        tags=("hr",),
    )
    masked, kinds = scan_event(event)
    assert kinds == ("ssn",) and masked.content == "my SSN is [secret:ssn]"
    assert masked.event_id == "e1" and masked.tags == ("hr",)
    assert scan_event(masked) == (masked, ())


def test_numbers_are_checked_as_cards_and_ids_are() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert card_prefix_ok("378282246310005") and not card_prefix_ok("9781492056355")
    assert cn_id_ok("11010519491231002X") and not cn_id_ok("110105194912310021")
    assert not find_secrets("order 4111111111111111 was refunded")
    assert find_secrets("card 4111111111111111 was refunded")[0].kind == "card-number"
    assert not find_secrets("tracking 9400 1000 0000 0000 0000 00")
