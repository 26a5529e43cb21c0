"""The assistant-log benchmark's generator: deterministic, self-consistent, paraphrased."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.assistant_log.data import AssistantLog, Question, generate  # noqa: E402
from benchmarks.assistant_log.topics import CATEGORIES, TWO_HOP, UPDATES  # noqa: E402

STOPWORDS = frozenset((ROOT / "hindsight_redis" / "data" / "stopwords.txt").read_text().split())
SEEDS = (0, 1, 7, 123)


def _stem(word: str) -> str:
    """A crude, generous stem: "moved", "moving", "move" and "mover" all become "mov"."""
    for suffix in ("ingly", "ing", "edly", "ed", "es", "s", "ly", "ion", "er"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word[:5]


def _content(text: str) -> set[str]:
    """The stems of the words the keyword leg would search for (stopwords left out)."""
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _digest(log: AssistantLog) -> str:
    text = repr((log.turns, log.questions))
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module", params=SEEDS)
def log(request: pytest.FixtureRequest) -> AssistantLog:
    return generate(request.param)


def test_the_same_seed_gives_the_same_log_and_another_seed_another() -> None:
    assert generate(5, users=3) == generate(5, users=3)
    one, other = generate(5, users=3), generate(6, users=3)
    answers = [q.answer for q in one.questions]
    assert len(set(answers) & {q.answer for q in other.questions}) <= len(answers) // 4
    assert [q.text for q in one.questions] != [q.text for q in other.questions]
    assert [t.text for t in one.turns[:50]] != [t.text for t in other.turns[:50]]


def test_the_log_does_not_depend_on_string_hashing() -> None:
    code = (
        "import sys, hashlib; sys.path.insert(0, '.');"
        "from benchmarks.assistant_log.data import generate; log = generate(2, users=4);"
        "print(hashlib.sha256(repr((log.turns, log.questions)).encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert digests == {_digest(generate(2, users=4))}


def test_a_default_run_is_a_few_thousand_turns_with_every_category(log: AssistantLog) -> None:
    assert 1500 <= len(log.turns) <= 3500
    assert len(log.questions) >= 150
    assert {q.category for q in log.questions} == set(CATEGORIES)
    assert len({t.id for t in log.turns}) == len(log.turns)
    assert len({q.id for q in log.questions}) == len(log.questions)
    assert 400 <= len(generate(0, users=3).turns) <= 1000  # --quick


def test_every_question_points_at_user_fact_turns_that_exist(log: AssistantLog) -> None:
    turns = {t.id: t for t in log.turns}
    for q in log.questions:
        assert q.evidence
        for turn_id in q.evidence + q.superseded:
            turn = turns[turn_id]
            assert (turn.kind, turn.speaker, turn.user) == ("fact", "user", q.user)
        assert not set(q.evidence) & set(q.superseded)


def test_the_evidence_states_the_answer(log: AssistantLog) -> None:
    turns = {t.id: t for t in log.turns}
    for q in log.questions:
        assert any(q.answer in turns[t].text for t in q.evidence), q
        if q.category in UPDATES:  # the old value is what the superseded turns said
            assert all(q.answer not in turns[t].text for t in q.superseded), q


def test_superseded_turns_precede_the_newest_fact(log: AssistantLog) -> None:
    order = {t.id: n for n, t in enumerate(log.turns)}
    session = {t.id: t.session for t in log.turns}
    updates = [q for q in log.questions if q.category in UPDATES]
    assert updates
    for q in updates:
        assert q.superseded, q
        assert max(order[t] for t in q.superseded) < min(order[t] for t in q.evidence), q
        assert session[q.superseded[0]] != session[q.evidence[0]]  # told in another session
    for q in log.questions:
        if q.category not in UPDATES:
            assert not q.superseded


def test_two_hop_questions_need_two_turns_of_two_sessions(log: AssistantLog) -> None:
    session = {t.id: t.session for t in log.turns}
    for q in (q for q in log.questions if q.category == TWO_HOP):
        assert len(q.evidence) == 2
        assert session[q.evidence[0]] != session[q.evidence[1]]


def _answer_words(q: Question) -> set[str]:
    return {w for w in _words(q.answer) if len(w) >= 3 and w not in STOPWORDS}


def test_no_question_contains_its_answer(log: AssistantLog) -> None:
    for q in log.questions:
        assert _answer_words(q), q
        assert not _answer_words(q) & _words(q.text), q


def test_paraphrased_questions_share_no_content_word_with_their_turns(log: AssistantLog) -> None:
    turns = {t.id: t for t in log.turns}
    paraphrased = [q for q in log.questions if q.paraphrased]
    assert len(paraphrased) >= 0.8 * len(log.questions)
    for q in paraphrased:
        asked = _content(q.text) - {"user"}  # "the user": the speaker label of every user line
        for turn_id in q.evidence + q.superseded:
            assert not asked & _content(turns[turn_id].text), (q.text, turns[turn_id].text)


def test_questions_that_name_the_event_or_relative_share_that_name_only(
    log: AssistantLog,
) -> None:
    turns = {t.id: t for t in log.turns}
    literal = [q for q in log.questions if not q.paraphrased]
    assert literal
    for q in literal:
        assert q.category == TWO_HOP or q.topic == "appointment", q
        shared = _content(q.text) & set().union(*(_content(turns[t].text) for t in q.evidence))
        assert shared, q.text


def test_no_question_has_an_answer_that_could_be_memorised() -> None:
    questions = generate(0).questions + generate(1).questions
    assert len({q.text for q in questions}) >= 0.5 * len(questions)  # many wordings
    answers: dict[str, list[str]] = {}
    for q in questions:
        answers.setdefault(q.text, []).append(q.answer)
    repeated = [a for a in answers.values() if len(a) > 1]
    assert repeated  # the same words ask about different people...
    assert sum(len(set(a)) for a in repeated) >= 0.9 * sum(len(a) for a in repeated)  # ...values
    assert len({q.answer for q in questions}) >= 0.7 * len(questions)
