"""The receipt and the trail as people read them (``ops.render``): what, where, who."""

from __future__ import annotations

from hindsight_redis.lifecycle.exports import ExportRecord
from hindsight_redis.ops.render import audit_table, erasure_lines
from hindsight_redis.trust.audit import AuditEntry
from hindsight_redis.trust.erasure import PLACES, ErasureReceipt


def _receipt(dry_run: bool) -> ErasureReceipt:
    return ErasureReceipt(
        namespace="team-a",
        selector={"tag": ["user:alice"]},
        dry_run=dry_run,
        by="dpo",
        how="token",
        at=1_767_225_600.0,
        ids=("a1", "a2"),
        digest="d" * 32,
        erased={**dict.fromkeys(PLACES, 0), "memories": 2, "stream": 1},
        exports=(ExportRecord("/cold/a.jsonl.gz", 1_767_000_000.0, "all", 9, "x", holding=2),),
        audit_id="" if dry_run else "1767225600000-0",
    )


def test_a_receipt_says_what_went_where_and_what_is_left_to_delete() -> None:
    text = erasure_lines(_receipt(dry_run=False))
    first, *rest = text.splitlines()
    assert first == (
        "team-a: erased 2 write(s) named by tag user:alice; asked by dpo (token) "
        "at 2026-01-01 00:00:00"
    )
    assert "  memories          2" in rest and "  stream            1" in rest
    assert not any("dead_letters" in line for line in rest)  # nothing there: not listed
    assert any("/cold/a.jsonl.gz (2 of them" in line for line in rest)
    assert rest[-1] == "  recorded in the audit trail (1767225600000-0)"
    dry = erasure_lines(_receipt(dry_run=True))
    assert dry.startswith("dry run: team-a: would erase 2") and "audit trail" not in dry


def test_the_audit_table_shows_when_who_how_and_the_first_ids() -> None:
    entries = [
        AuditEntry("2-0", "erase", "dpo", 1_767_225_600.0, "token", ("a1" * 8, "a2"), 5, "d"),
        AuditEntry(
            "1-0", "write", "planner", 1_767_225_500.0, "", ("w1",), 1, "e", {"indexed": "1"}
        ),
    ]
    lines = audit_table(entries).splitlines()
    assert lines[0].split() == ["when", "(UTC)", "action", "by", "how", "n", "what"]
    assert lines[1].startswith("2026-01-01 00:00:00  erase    dpo") and "token" in lines[1]
    assert "a1a1a1a1,a2…" in lines[1]  # ids cut to 8, more than shown: an ellipsis
    assert "w1 indexed=1" in lines[2] and " - " in lines[2]  # no identity known: "-"
    assert audit_table([]) == "no audit entry"
