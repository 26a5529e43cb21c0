"""The evaluation's arithmetic and its golden-file edge: metrics by hand, bad lines named by
line number, thresholds and comparisons."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from hindsight_redis.errors import InvalidArgument
from hindsight_redis.ops.evaluate import (
    Metrics,
    Scores,
    below,
    compare,
    mean,
    parse_question,
    parse_thresholds,
    percentile,
    read_golden,
    read_report,
    report,
    score,
)
from hindsight_redis.ops.selfcheck import rare_words_query, words_of


def hits(*pairs: str) -> list[tuple[str, str]]:
    """Hits as (id, source): ``"a/s1"`` is memory a from source s1."""
    return [tuple(p.split("/")) for p in pairs]  # type: ignore[misc]


def test_a_question_answered_at_rank_one_scores_one_everywhere() -> None:
    assert score(hits("a/s1", "b/s2"), ["a"], k=10) == Scores(1.0, 1.0, 1.0, 1.0)


def test_recall_is_the_share_of_relevant_found_in_the_top_k() -> None:
    s = score(hits("x/s0", "a/s1", "y/s9", "b/s2"), (), ["s1", "s2", "s3"], k=3)
    assert s.recall == pytest.approx(1 / 3)  # s2 is at rank 4: beyond k
    assert s.hit == 1.0
    assert s.mrr == 0.5
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert s.ndcg == pytest.approx((1 / math.log2(3)) / ideal)


def test_nothing_relevant_in_the_top_k_scores_zero() -> None:
    assert score(hits("x/s0", "y/s9", "a/s1"), ["a"], k=2) == Scores(0.0, 0.0, 0.0, 0.0)
    assert score([], ["a"], k=5) == Scores(0.0, 0.0, 0.0, 0.0)


def test_two_memories_of_one_source_count_once() -> None:
    """A source several memories share is found once: the second adds no gain."""
    s = score(hits("a/s1", "b/s1", "c/s2"), (), ["s1", "s2"], k=3)
    assert s.recall == 1.0
    ideal = 1 + 1 / math.log2(3)
    assert s.ndcg == pytest.approx((1 + 1 / math.log2(4)) / ideal)


def test_ids_and_sources_mix() -> None:
    s = score(hits("x/s0", "a/s1", "b/s2"), ["b"], ["s1"], k=3)
    assert s.recall == 1.0 and s.mrr == 0.5


def test_recall_matches_the_benchmarks_formula() -> None:
    """benchmarks/recall.py: len(evidence & set(sources[:k])) / len(evidence)."""
    ranked = hits("a/D1:3", "b/D1:9", "c/D2:1", "d/D1:3", "e/D3:4")
    evidence = {"D1:3", "D3:4", "D7:7"}
    for k in (1, 3, 5):
        expected = len(evidence & {src for _, src in ranked[:k]}) / len(evidence)
        assert score(ranked, (), evidence, k=k).recall == pytest.approx(expected)


def test_mean_and_percentile() -> None:
    m = mean([Scores(1, 1, 1, 1), Scores(0, 0, 0, 0), Scores(0.5, 1, 0.5, 0.25)])
    assert m == Metrics(3, 0.5, pytest.approx(2 / 3), 0.5, pytest.approx(1.25 / 3))  # type: ignore[arg-type]
    assert mean([]).questions == 0
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    assert percentile(list(map(float, range(1, 101))), 99) == 99.0
    assert percentile([], 99) == 0.0


def test_a_good_line_parses() -> None:
    q = parse_question(
        {
            "query": "when is the deploy window?",
            "relevant": ["m1", "m1"],
            "relevant_sources": ["turn-3"],
            "filters": {"session_id": "s1", "tags": ["user:alice"], "since": 1.5},
            "as_agent": "planner",
            "tags": ["ops"],
        },
        7,
    )
    assert q.relevant == ("m1",) and q.relevant_sources == ("turn-3",) and q.line == 7
    assert q.filters["tags"] == ["user:alice"] and q.tags == ("ops",)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ([1, 2], "a JSON object"),
        ({"relevant": ["a"]}, "'query'"),
        ({"query": "  ", "relevant": ["a"]}, "'query'"),
        ({"query": "q"}, "'relevant'"),
        ({"query": "q", "relevant": "a"}, "'relevant' must be a list"),
        ({"query": "q", "relevant": [""]}, "'relevant' must be a list"),
        ({"query": "q", "relevant": ["a"], "tag": ["x"]}, "unknown key 'tag'"),
        ({"query": "q", "relevant": ["a"], "filters": []}, "'filters' must be an object"),
        ({"query": "q", "relevant": ["a"], "filters": {"top_k": 3}}, "cannot set 'top_k'"),
        ({"query": "q", "relevant": ["a"], "filters": {"colour": 3}}, "unknown filter 'colour'"),
        ({"query": "q", "relevant": ["a"], "filters": {"since": "yesterday"}}, "since"),
        ({"query": "q", "relevant": ["a"], "as_agent": 5}, "'as_agent'"),
        ({"query": "q", "relevant": ["a"], "tags": "x"}, "'tags' must be a list"),
    ],
)
def test_a_bad_line_says_what_is_wrong(value: object, says: str) -> None:
    with pytest.raises(InvalidArgument, match=says):
        parse_question(value)


def test_a_bad_file_names_the_line(tmp_path: Path) -> None:
    good = json.dumps({"query": "q", "relevant": ["a"]})
    path = tmp_path / "golden.jsonl"
    path.write_text(f"{good}\n\n{good}\n{{not json\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match=r"golden.jsonl, line 4: not JSON"):
        read_golden(path)
    path.write_text(f"{good}\n" + json.dumps({"query": "q"}) + "\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match=r"line 2: name what answers it"):
        read_golden(path)
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match="no questions"):
        read_golden(path)
    with pytest.raises(InvalidArgument, match="cannot read golden file"):
        read_golden(tmp_path / "missing.jsonl")
    path.write_text(f"{good}\n\n{good}\n", encoding="utf-8")
    assert [q.line for q in read_golden(path)] == [1, 3]


def test_thresholds() -> None:
    assert parse_thresholds("recall=0.7, mrr=0.5") == {"recall": 0.7, "mrr": 0.5}
    assert parse_thresholds("recall@10=0.7") == {"recall": 0.7}
    for bad in ("recall", "precision=0.5", "recall=1.5", "recall=high", ""):
        with pytest.raises(InvalidArgument, match="--fail-under"):
            parse_thresholds(bad)
    overall = Metrics(10, 0.65, 0.9, 0.5, 0.6)
    assert below(overall, {"recall": 0.7, "hit": 0.9}) == ["recall 0.650 < 0.700"]
    assert below(overall, {"mrr": 0.5}) == []


def test_compare_reads_a_json_report(tmp_path: Path) -> None:
    old = report("golden", "hybrid", 10, [Scores(0.5, 1, 0.5, 0.5)], {}, [], [2.0, 4.0])
    new = report("golden", "hybrid", 10, [Scores(0.75, 1, 1, 0.8)], {}, [], [3.0])
    path = tmp_path / "before.json"
    path.write_text(json.dumps(old.as_dict()), encoding="utf-8")
    rows = dict((name, (a, b)) for name, a, b in compare(read_report(path), new))
    assert rows["recall"] == (0.5, 0.75) and rows["mrr"] == (0.5, 1.0)
    assert rows["p50_ms"] == (2.0, 3.0)
    path.write_text('{"overall": {"recall": 1}}', encoding="utf-8")
    with pytest.raises(InvalidArgument, match="not a report"):
        read_report(path)


def test_a_rare_word_query_keeps_the_rarest_words_in_their_order() -> None:
    words = words_of("The deploy of billing-service failed with ERR_CONN_RESET on Tuesday", {})
    assert "the" not in words and "err_conn_reset" in words
    frequency = Counter({"deploy": 40, "failed": 30, "tuesday": 5, "billing": 2, "service": 50})
    assert rare_words_query(words, frequency, size=3) == "billing err_conn_reset tuesday"


def test_chinese_words_come_from_the_segmentation() -> None:
    words = words_of("部署窗口在周二 deploy", {"部署窗口在周二": ["部署", "窗口", "周二"]})
    assert words == ["deploy", "部署", "窗口", "周二"]
