"""The usual members of a kind a question asks for, and the memories that name one."""

from __future__ import annotations

import pytest

from hindsight_redis.language.kind_members import members, mentions_member, singular
from hindsight_redis.language.kinds import AskedKind, asked_kind


@pytest.mark.parametrize(
    ("question", "member"),
    [
        ("What instruments does Melanie play?", "violin"),
        ("What martial arts has John done?", "karate"),  # the two words, not "art"
        ("What kind of art does Caroline make?", "pottery"),
        ("What kind of interests do Joanna and Nate share?", "hiking"),
        ("What outdoor activities does John enjoy?", "surfing"),
        ("What exercises has John done?", "yoga"),
        ("How many children does Melanie have?", "daughter"),
        ("What are Nate's favorite desserts?", "cake"),
        ("What are Melanie's pets?", "dog"),
        ("Which dishes has Maria cooked?", "soup"),
    ],
)
def test_a_known_kind_has_its_usual_members(question: str, member: str) -> None:
    assert member in members(asked_kind(question))


@pytest.mark.parametrize(
    "question",
    [
        "Where has Melanie camped?",  # places: too broad a kind for usual members
        "What has John cooked?",  # things
        "What are the names of John's children?",
        "What skills has Nate taught?",
        "What did Nate do for Joanna?",  # no kind
    ],
)
def test_other_kinds_have_none(question: str) -> None:
    assert members(asked_kind(question)) == ()


def test_no_kind_or_no_words_have_none() -> None:
    assert members(None) == ()
    assert members(AskedKind("???", plural=False, named=False)) == ()


@pytest.mark.parametrize(
    ("plural", "one"),
    [
        ("activities", "activity"),
        ("dishes", "dish"),
        ("classes", "class"),
        ("arts", "art"),
        ("children", "child"),
        ("games", "game"),
        ("glass", "glass"),
        ("bus", "bus"),
    ],
)
def test_singular(plural: str, one: str) -> None:
    assert singular(plural) == one


def test_a_memory_naming_a_member_in_the_singular_or_plural() -> None:
    related = members(asked_kind("What pets does Maria have?"))
    assert mentions_member("Maria: I just adopted a puppy!", related)
    assert mentions_member("Maria: Both Dogs are asleep", related)
    assert mentions_member("Maria: my cat, Luna", related)
    assert mentions_member("Maria: my dog's new toy", related)


def test_a_member_inside_another_word_or_the_speaker_label_is_no_mention() -> None:
    related = members(asked_kind("What pets does Maria have?"))
    assert not mentions_member("Maria: the education fair was fun", related)  # "cat"
    assert not mentions_member("Maria: a dog-friendly cafe", related)
    assert not mentions_member("Bird: I went to the gym", related)  # the speaker's name
    assert not mentions_member("Maria: I adopted a puppy", ())
