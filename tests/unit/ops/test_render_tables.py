"""Tables for people (``ops.layout``, ``ops.render``): the terminal's width, whole rows off a
terminal, wide characters, the words that differ between two conflicting memories."""

from __future__ import annotations

import io
import os
import pty

import pytest

from hindsight_redis.core.models import MemoryRecord, SearchHit
from hindsight_redis.lifecycle.forgetting import SweepCandidate, SweepReport
from hindsight_redis.ops.admin import DeadLetter
from hindsight_redis.ops.layout import (
    Column,
    cells,
    changes,
    colours,
    cut,
    screen_width,
    table,
    wrap,
)
from hindsight_redis.ops.render import (
    audit_table,
    conflicts_table,
    dead_letters_table,
    held_table,
    hits_table,
    start_line,
    stats_lines,
    sweep_lines,
)
from hindsight_redis.trust.audit import AuditEntry

LONG = (
    "The deploy window for billing is Tuesday 14:00 to 16:00 UTC, agreed with the payments "
    "team after the March incident; the change freeze applies to every service in the cluster"
)
CJK = "用户喜欢用中文回答问题，并且希望回答简洁明了，不要超过三句话，也不要使用任何表情符号"


def _hit(memory_id: str, content: str, agent: str = "planner") -> SearchHit:
    return SearchHit(
        memory_id, content, "", agent, "", "", (), created_at=0.0, vector=0.5, fused=0.75
    )


def _record(memory_id: str, content: str, at: float, *others: str) -> MemoryRecord:
    return MemoryRecord(
        memory_id, "ns", content, "active", agent_id="ops", created_at=at, conflicts_with=others
    )


def _widest(text: str) -> int:
    return max(cells(line) for line in text.splitlines())


def test_the_width_is_the_terminals_and_none_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert screen_width(io.StringIO()) is None
    primary, secondary = pty.openpty()
    try:
        with os.fdopen(secondary, "w", closefd=False) as terminal:
            monkeypatch.setenv("COLUMNS", "72")
            assert screen_width(terminal) == 72
            monkeypatch.setenv("COLUMNS", "5")  # drawn at a width tables can still take
            assert screen_width(terminal) == 20
            monkeypatch.delenv("NO_COLOR", raising=False)
            monkeypatch.setenv("TERM", "xterm")
            assert colours(terminal) and not colours(io.StringIO())
            monkeypatch.setenv("NO_COLOR", "1")
            assert not colours(terminal)
    finally:
        os.close(primary)
        os.close(secondary)


def test_off_a_terminal_rows_are_whole() -> None:
    hits = [_hit("m1", LONG + "\nsecond line"), _hit("m2", CJK, agent="a-very-long-agent-name")]
    lines = hits_table(hits, now=60.0).splitlines()
    assert len(lines) == 3 and "…" not in "".join(lines)
    assert lines[1].endswith(LONG + " second line")  # on its row: newlines are spaces
    assert lines[2].endswith(CJK) and "a-very-long-agent-name" in lines[2]
    assert lines[0].split() == ["#", "fused", "vec", "kw", "ctx", "agent", "age", "memory"]


@pytest.mark.parametrize("width", [60, 80, 100, 160])
def test_on_a_terminal_rows_fit_its_width_and_wide_characters_count_twice(width: int) -> None:
    text = hits_table([_hit("m1", LONG), _hit("m2", CJK)], width=width, now=60.0)
    lines = text.splitlines()
    assert _widest(text) <= width and len(lines) == 3
    assert ("…" in lines[1]) is (width < 200) and ("…" in lines[2]) is (width < 120)
    starts = {cells(line[: line.index(start)]) for line, start in zip(lines, "mT用", strict=True)}
    assert len(starts) == 1  # the memory column starts at one cell for every row
    if width < 70:  # a leg's score gives way to the text
        assert lines[0].split() == ["#", "fused", "vec", "kw", "agent", "age", "memory"]


def test_a_terminal_too_narrow_puts_the_text_under_its_row() -> None:
    lines = held_table([_record("h" * 32, LONG, 0.0)], width=40, now=60.0).splitlines()
    assert lines[0].startswith("id   ") and lines[1] == "    write"
    assert lines[2].startswith("h" * 32) and lines[3].startswith("    The deploy")
    assert all(cells(line) <= 40 for line in lines)


def test_cells_cuts_and_wraps_count_terminal_cells() -> None:
    assert cells("用户ab") == 6 and cells("e\u0301") == 1  # a combining accent takes none
    assert cells("\x1b[1;31mred\x1b[0m") == 3
    assert cut(CJK, 9) == "用户喜欢…" and cells(cut(CJK, 10)) <= 10
    styled = cut("\x1b[1;32m" + "x" * 30 + "\x1b[0m", 10)
    assert styled.endswith("\x1b[0m…") and cells(styled) == 10  # the style is closed
    assert [cells(line) <= 12 for line in wrap(CJK, 12)] == [True] * len(wrap(CJK, 12))
    assert "".join(wrap(CJK, 12)) == CJK
    assert wrap("a " + "b" * 25, 10) == ["a", "b" * 10, "b" * 10, "b" * 5]


def test_columns_keep_their_least_and_cut_to_their_cap() -> None:
    columns = [Column("n", right=True), Column("who", cap=6, least=3, width=4)]
    rows = [("7", "somebody", "text"), ("12", "me", "more text")]
    assert table(columns, "what", rows, width=None) == [
        " n  who       what",
        " 7  somebody  text",
        "12  me        more text",
    ]
    assert table(columns, "what", rows, width=40)[1] == " 7  someb…  text"
    assert table(columns, "what", rows, width=30)[2:4] == [" 7  so…", "    text"]


def test_the_words_that_differ_are_marked_on_each_side() -> None:
    old, new = changes(
        "The deploy window for billing is Tuesday 14:00",
        "The deploy window for billing is Thursday 14:00 sharp",
    )
    assert old == "The deploy window for billing is [-Tuesday-] 14:00"
    assert new == "The deploy window for billing is {+Thursday+} 14:00 {+sharp+}"
    old, new = changes("用户喜欢用中文回答", "用户喜欢用英文回答")  # no spaces: by character
    assert (old, new) == ("用户喜欢用[-中-]文回答", "用户喜欢用{+英+}文回答")
    old, new = changes("a b c", "a x y c", styled=True)
    assert old == "a \x1b[1;31mb\x1b[0m c" and "[-" not in old
    assert new == "a \x1b[1;32mx\x1b[0m \x1b[1;32my\x1b[0m c"
    assert changes("same words", "same  words") == ("same words", "same words")


def test_conflicts_show_each_pair_once_newer_first_with_the_change_visible() -> None:
    old_text = LONG
    new_text = LONG.replace("Tuesday 14:00 to 16:00", "Thursday 14:00 to 18:00")
    records = [_record("n" * 32, new_text, 200.0, "o" * 32), _record("o" * 32, old_text, 100.0)]
    records[1] = _record("o" * 32, old_text, 100.0, "n" * 32)
    whole = conflicts_table(records, now=300.0).splitlines()
    assert whole[1].startswith("new  " + "n" * 32) and "{+Thursday+}" in whole[1]
    assert whole[2].startswith("old  " + "o" * 32) and "[-16:00-]" in whole[2]
    assert whole[1].endswith("every service in the cluster") and len(whole) == 5
    for width in (60, 100):
        shown = conflicts_table(records, width=width, styled=True, now=300.0)
        assert _widest(shown) <= width and "…" not in shown  # wrapped, never cut
        assert "\x1b[1;32mThursday\x1b[0m" in shown and "\x1b[1;31m16:00\x1b[0m" in shown
        assert " ".join(shown.split()).count("in the cluster") == 2
    # The other one of a pair read apart, and one that cannot be read here.
    alone = conflicts_table(
        [_record("n" * 32, new_text, 200.0, "o" * 32, "g" * 32)],
        {"o" * 32: _record("o" * 32, old_text, 100.0)},
    )
    assert "{+18:00+}" in alone and "[-16:00-]" in alone
    assert "g" * 32 in alone and "(not readable here)" in alone
    assert conflicts_table([]) == "no open conflict"


def test_the_other_tables_take_the_width_and_are_whole_without_one() -> None:
    entries = [AuditEntry("1-0", "write", "planner", 0.0, "", ("w1",), 1, "e", {"why": LONG})]
    assert audit_table(entries).endswith(LONG)
    assert _widest(audit_table(entries, width=70)) <= 70
    report = SweepReport(
        namespace="ns",
        dry_run=True,
        threshold=None,
        max_active=4,
        active_before=10,
        protected=0,
        to_archive=1,
        archived=0,
        active_after=9,
        lowest=[
            SweepCandidate(
                "c" * 32, 0.1, {"frequency": 0.1, "recency": 0.2, "write": 0.3}, "low", LONG
            )
        ],
    )
    assert sweep_lines(report).splitlines()[-1].endswith(LONG)
    narrow = sweep_lines(report, width=60).splitlines()
    assert all(cells(line) <= 60 for line in narrow[1:]) and "freq" not in narrow[2]
    assert held_table([_record("h" * 32, LONG, 0.0)]).splitlines()[1].endswith(LONG)


def test_a_start_line_says_what_where_and_how_it_stops() -> None:
    line = start_line(
        "worker w1",
        namespaces="namespace 'team-a'",
        redis="redis://***@cache:6379/0",
        profile="durable",
        then="Ctrl-C stops it",
    )
    assert line == (
        "worker w1: namespace 'team-a'; Redis redis://***@cache:6379/0 (profile durable); "
        "Ctrl-C stops it"
    )
    assert "profile" not in start_line("x", namespaces="n", redis="r", profile=None, then="t")


def test_dead_letters_show_when_how_often_why_and_what() -> None:
    letters = [
        DeadLetter("9-0", "1-0", "PoisonMessage: " + "x" * 80, 3, 0.0, None, None),
        DeadLetter("9-1", "1-1", "TimeoutError", 1, 0.0, LONG, "m1"),
    ]
    whole = dead_letters_table(letters).splitlines()
    assert whole[0].split() == ["id", "failed", "(UTC)", "tries", "error", "write"]
    assert whole[1].startswith("9-0  1970-01-01 00:00:00      3  PoisonMessage: xxx")
    assert whole[1].endswith("x  -") and whole[2].endswith(LONG)
    assert _widest(dead_letters_table(letters, width=80)) <= 80
    assert dead_letters_table([]) == "no dead letter"


def test_the_refine_row_says_how_old_the_backlog_is_and_what_else_waits() -> None:
    stats = {"refine_pending": 4, "refine_lag_s": 1.5, "refine_drafts": 2, "refine_chinese": 3}
    (row,) = [line for line in stats_lines(stats).splitlines() if line.startswith("refine")]
    assert row.split(None, 2)[2] == (
        "4  (the oldest waits 1.5 s; 2 drafts to redo exactly; 3 Chinese to embed)"
    )
    waiting = {"refine_pending": 0, "refine_lag_s": 0.0, "refine_drafts": 0, "refine_chinese": 1}
    assert "refine pending  0  (1 Chinese to embed)" in stats_lines(waiting)
    assert "refine pending  no index yet" in stats_lines({"refine_pending": None})
