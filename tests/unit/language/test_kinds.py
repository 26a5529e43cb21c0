"""What kind of thing a question asks for, and whether a memory names something."""

from __future__ import annotations

import pytest

from hindsight_redis.language.kinds import AskedKind, asked_kind, names_something


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What books has Tim read?", AskedKind("books", plural=True, named=True)),
        ("Which US cities does John mention?", AskedKind("US cities", plural=True, named=True)),
        ("What kind of interests do Joanna and Nate share?", AskedKind("interests", True, False)),
        ("What board games has Nate played?", AskedKind("board games", True, True)),
        ("What European countries has Maria been to?", AskedKind("European countries", True, True)),
        ("What are Joanna's hobbies?", AskedKind("hobbies", plural=True, named=False)),
        ("What are the names of John's children?", AskedKind("names", plural=True, named=True)),
        ("What are the skills that Nate has taught?", AskedKind("skills", True, False)),
        ("How many tournaments has Nate won?", AskedKind("tournaments", True, False)),
        ("Where has Melanie camped?", AskedKind("places", plural=True, named=True)),
        ("What has John cooked?", AskedKind("things", plural=True, named=False)),
        ("Which book did Tim recommend?", AskedKind("book", plural=False, named=True)),
        ("What TV series does Tim watch?", AskedKind("TV series", plural=True, named=True)),
    ],
)
def test_the_kind_a_question_asks_for(question: str, kind: AskedKind) -> None:
    assert asked_kind(question) == kind


@pytest.mark.parametrize(
    "question",
    [
        "What did Nate do for Joanna?",
        "What is Joanna allergic to?",
        "When did Nate get Tilly?",
        "What does Tim do to escape reality?",
        "How many years has she painted?",  # a span: a time, not a kind
        "Where did Caroline move from?",  # one place, asked of the past
        "the books Tim read",
        "我读过哪些书",
    ],
)
def test_questions_asking_for_no_kind(question: str) -> None:
    assert asked_kind(question) is None


@pytest.mark.parametrize(
    "memory",
    [
        'Nate: I just watched "Little Women" and loved it',
        "Nate: I just watched “Little Women” and loved it",
        "John: I was in Chicago, it was awesome!",
        "Tim: We played Catan all night",
        "Tim: I love the Harry Potter books",
        "I went to London, Paris and Rome",
    ],
)
def test_memories_that_name_something(memory: str) -> None:
    assert names_something(memory, people=("Tim", "John"))


@pytest.mark.parametrize(
    "memory",
    [
        "Joanna: Thanks, Nate! Appreciate it.",
        "Tim: Hey Sam, how are you?",
        "Tim: it was great, Nate.",
        "Tim: I went there on Friday, in March",
        "Tim: I'm a shooting guard and I love it",
        "Tim: I told John about it",  # a person the question names
        "Tim: Tim here, back from the trip",  # sentence-initial, the speaker
        "Sure! It was fun.",
    ],
)
def test_memories_that_name_nothing(memory: str) -> None:
    assert not names_something(memory, people=("John",))
