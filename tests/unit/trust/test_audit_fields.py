"""The audit trail's entries hold ids, counts and digests: never a memory's text."""

from __future__ import annotations

import pytest

from hindsight_redis.errors import InvalidArgument
from hindsight_redis.trust.audit import (
    SHOWN_IDS,
    audit_fields,
    digest_ids,
    entry_from_fields,
    oldest_kept_id,
)


def test_an_entry_lists_some_ids_and_digests_them_all() -> None:
    ids = [f"m{n}" for n in range(SHOWN_IDS + 5)]
    fields = audit_fields("erase", "ops", how="token", ids=ids, at=10.0, details={"tag": "user:x"})
    entry = entry_from_fields("1-0", fields)
    assert entry.count == SHOWN_IDS + 5 and len(entry.ids) == SHOWN_IDS
    assert entry.digest == digest_ids(reversed(ids))  # the set, whatever its order
    assert entry.by == "ops" and entry.how == "token" and entry.at == 10.0
    assert entry.details == {"tag": "user:x"}


def test_unknown_actions_and_text_sized_details_are_refused() -> None:
    with pytest.raises(InvalidArgument, match="unknown audit action"):
        audit_fields("gossip", "ops")
    with pytest.raises(InvalidArgument, match="too long"):
        audit_fields("write", "ops", details={"content": "x" * 500})


def test_entries_older_than_the_retention_are_trimmed_by_id() -> None:
    assert oldest_kept_id(1.0, now=86_400.0 + 5) == "5000"
    assert oldest_kept_id(30.0, now=10.0) == "0"
