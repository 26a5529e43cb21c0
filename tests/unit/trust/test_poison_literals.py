"""The literals a pattern cannot match without (``trust.poison.literals``): every match holds
one of them, under IGNORECASE and the engine's odd case pairs too; a pattern that cannot be
reduced gets no test and is always searched."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from hindsight_redis.trust.poison import claim_cues, hide_cues, literals, rule_cues, send_cues
from hindsight_redis.trust.poison.literals import fold, literal_test, required, worth_searching
from hindsight_redis.trust.poison.signal import Cue
from hindsight_redis.trust.poisoning import SIGNALS, normalize

DATA = Path(__file__).resolve().parents[2] / "data"
# Letters whose case the engine folds in odd ways: dotted and dotless i, long s, Kelvin, sigma.
_ALPHABET = "abAB iIıİsSſkKKσςΣ:-"


def _holds_a_literal(pattern: re.Pattern[str], text: str) -> bool:
    """Whether every match of ``pattern`` in ``text`` holds one of its literals."""
    literals = required(pattern)
    if literals is None:
        return True
    return all(
        any(literal in fold(m.group(0)) for literal in literals)
        for at in range(len(text) + 1)
        if (m := pattern.match(text, at))
    )


@pytest.mark.parametrize(
    ("source", "literals"),
    [
        (r"\bignore\s+(?:all|any)\b", {"ignore"}),
        (r"(?:system|developer) prompt", {"system prompt", "developer prompt"}),
        (r"new\s+instructions?\s*[:：]", {"instruction"}),
        (r"(?:a|b)c", {"ac", "bc"}),
        (r"x[yz]", {"xy", "xz"}),
        (r"SYSTEM", {"system"}),
        (r"ſtop", {"stop"}),
        (r"你的(?:指令|规则)", {"你的指令", "你的规则"}),
    ],
)
def test_literals_of_hand_made_patterns(source: str, literals: set[str]) -> None:
    assert required(re.compile(source, re.IGNORECASE)) == literals


@pytest.mark.parametrize(
    "source", [r"\w+", r"a?b*", r"[^x]+", r"(?:ab|.)", r"(\w)\1", r".{3}", r"(?:ab)?c?"]
)
def test_a_pattern_that_cannot_be_reduced_is_always_searched(source: str) -> None:
    pattern = re.compile(source)
    assert literal_test(pattern) is None
    assert worth_searching(pattern, "")


def test_a_text_without_the_literals_is_not_searched() -> None:
    pattern = re.compile(r"\bignore\s+(?:all|any) previous\b", re.IGNORECASE)
    assert not worth_searching(pattern, fold("nothing to see here"))
    assert worth_searching(pattern, fold("IGNORE ALL PREVIOUS"))


def test_fold_reads_letters_as_the_engine_compares_them() -> None:
    assert fold("İGNORE ıt") == fold("ignore it") == "ignore it"
    assert fold("ſ") == fold("s")
    assert re.search("ignore", "İGNORE", re.IGNORECASE)  # what makes the dotted I matter


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    """A small random pattern over ``_ALPHABET``: literals, classes, groups, alternations,
    repeats, anchors and lookarounds."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.45 or depth > 2:
            part = re.escape(rng.choice(_ALPHABET))
        elif kind < 0.55:
            part = "[" + "".join(map(re.escape, rng.sample(_ALPHABET, rng.randint(1, 3)))) + "]"
        elif kind < 0.6:
            part = rng.choice([r"\b", r"\b", r"\s", ".", r"\w", "[^a]"])
        elif kind < 0.65:
            part = f"(?={_random_pattern(rng, depth + 1)})"
        else:
            alternatives = [_random_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3))]
            part = "(?:" + "|".join(alternatives) + ")"
        if rng.random() < 0.25:
            part = "(?:" + part + ")" + rng.choice(["?", "*", "+", "{2}", "{1,3}", "+?"])
        parts.append(part)
    return "".join(parts)


@pytest.mark.parametrize("most_tested_with_in", [6, 0])
def test_every_match_of_random_patterns_holds_a_literal(
    monkeypatch: pytest.MonkeyPatch, most_tested_with_in: int
) -> None:
    """Tested with ``in``, and with one alternation."""
    monkeypatch.setattr(literals, "_MAX_REGEX_TEST", most_tested_with_in)
    rng = random.Random(7 + most_tested_with_in)
    reduced = 0
    for _ in range(1000):
        flags = rng.choice([0, re.IGNORECASE, re.IGNORECASE | re.ASCII])
        pattern = re.compile(_random_pattern(rng), flags)
        reduced += required(pattern) is not None
        for _ in range(6):
            text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 14)))
            assert _holds_a_literal(pattern, text), (pattern, text)
            test = literal_test(pattern)
            if test is not None and pattern.search(text):
                assert test.may_match(fold(text)), (pattern, text)
    assert reduced > 300  # most are reduced: the test tests something


def _patterns() -> list[re.Pattern[str]]:
    found = [s.pattern for s in SIGNALS]
    for module in (rule_cues, send_cues, claim_cues, hide_cues):
        for value in vars(module).values():
            if isinstance(value, Cue):
                found += [pattern for pattern, _, _ in value.parts]
    return found


def test_every_match_of_the_signals_and_cues_holds_a_literal() -> None:
    texts = [
        json.loads(line)["text"]
        for name in sorted(DATA.glob("poisoning*.jsonl"))
        for line in name.read_text(encoding="utf-8").splitlines()
    ]
    patterns = _patterns()
    assert all(literal_test(p) is not None for p in patterns)  # none always searched
    for text in texts:
        norm = normalize(text)
        for spelled in (norm, norm.lower(), norm.upper()):
            for pattern in patterns:
                if pattern.search(spelled):
                    assert worth_searching(pattern, fold(spelled)), (pattern.pattern, text)


def test_many_literals_are_looked_for_with_one_pattern() -> None:
    pattern = re.compile(r"\b(?:alpha|alps|beta|gamma|delta|epsilon|zeta|theta)s?\b")
    test = literal_test(pattern)
    assert test is not None and test.alternation is not None
    assert test.alternation.pattern.startswith("(?:alp(?:ha|s)|beta|")  # factored
    assert test.may_match("the alphabet") and test.may_match("a zeta")
    assert not test.may_match("the alp, a bet")


def test_warm_prepares_every_test_a_scan_asks_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker derives the tests before its first batch (``poisoning.warm``): scanning the
    labelled sets afterwards derives none (each would hold up the batch that first needs it)."""
    from hindsight_redis.trust import poisoning

    monkeypatch.setattr(literals, "_KNOWN", {})
    poisoning.warm()
    prepared = len(literals._KNOWN)
    assert prepared > len(SIGNALS)  # the cues' patterns too
    for name in ("poisoning.jsonl", "poisoning_probes.jsonl", "secrets.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            poisoning.scan(json.loads(line)["text"])
    assert len(literals._KNOWN) == prepared
