"""A seeded synthetic assistant chat log with questions about it (pure, no I/O).

``generate(seed)`` builds, per user, several dated sessions of an assistant
chat: greetings, acknowledgements, small talk, task chatter and trap lines
around the facts the user tells (``topics``): plain facts,
facts that are later replaced (a move, a new employer, a rescheduled
appointment), preferences that change, restatements, and relatives whose job
is told in another session. Every question lists the turns that answer it
(``evidence``) and, when it asks for the current value of something that
changed, the turns that stated the old value (``superseded``). The same seed
always gives the same log; another seed gives other people, values, wording
and order.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from benchmarks.assistant_log import chatter as chat
from benchmarks.assistant_log import words
from benchmarks.assistant_log.personal import (
    APPOINTMENT,
    EVENTS,
    PLAIN_TOPICS,
    RELATIONS,
    RELATIVE_ASK,
    RELATIVE_INTRO,
    RELATIVE_JOB,
    RELATIVE_JOBS,
)
from benchmarks.assistant_log.topics import CHANGING, PREVIOUS, TWO_HOP, Topic

# Slots of chatter and traps filled from the fact word lists (minus the user's own values).
_POOLS: dict[str, Sequence[str]] = {
    "friend": words.FIRST_NAMES,
    "colleague": words.FIRST_NAMES,
    "city": words.CITIES,
    "place": words.CITIES,
    "drink": words.DRINKS,
    "car": words.CARS,
    "company": words.COMPANIES,
    "exercise": words.EXERCISES,
    "cuisine": words.CUISINES,
    "tongue": words.LANGUAGES,
    "diet": words.DIETS,
    "instrument": words.INSTRUMENTS,
    **chat.SLOTS,
    "ingredient2": chat.SLOTS["ingredient"],
    "chore2": chat.SLOTS["chore"],
}
_EPOCH = date(2024, 1, 8)
_LEAD_INS = ("", "", "", "", "Question for you: ", "For the record, ", "Just to confirm, ")


@dataclass(frozen=True)
class Turn:
    """One line of the log: who said it, in which session, when."""

    id: str
    user: str
    session: str
    speaker: str  # "user" | "assistant"
    text: str
    at: float  # unix seconds
    kind: str = "filler"  # filler | fact

    @property
    def content(self) -> str:
        """The line as an agent records it: ``"User: ..."`` or ``"Assistant: ..."``."""
        return f"{self.speaker.capitalize()}: {self.text}"

    @property
    def day(self) -> str:
        """The session's date, ``YYYY-MM-DD``."""
        return datetime.fromtimestamp(self.at, UTC).date().isoformat()


@dataclass(frozen=True)
class Question:
    """A question about one user, the turns that answer it and, for an update,
    the turns it must rank above (``superseded``)."""

    id: str
    user: str
    category: str
    topic: str
    text: str
    answer: str
    evidence: tuple[str, ...]
    superseded: tuple[str, ...] = ()
    paraphrased: bool = True
    """False when the question names the event or the relative as the user did."""


@dataclass(frozen=True)
class AssistantLog:
    """The generated log (turns in order) and its questions."""

    seed: int
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


@dataclass
class _Fact:
    """A fact line waiting for its place: session, order within it, text, id once placed."""

    session: int
    order: float
    text: str
    turn_id: str = ""


@dataclass
class _Draft:
    """A question whose turns are not placed yet."""

    category: str
    topic: str
    text: str
    answer: str
    told: list[_Fact]
    old: list[_Fact] = field(default_factory=list)
    paraphrased: bool = True


@dataclass
class _User:
    """Per-user generation state."""

    uid: str
    rng: random.Random
    sessions: int
    used: set[str] = field(default_factory=set)
    facts: list[_Fact] = field(default_factory=list)
    questions: list[_Draft] = field(default_factory=list)

    def pick(self, pool: Sequence[str]) -> str:
        """A value of ``pool`` this user has not used yet."""
        value = self.rng.choice([v for v in pool if v not in self.used])
        self.used.add(value)
        return value

    def fact(self, session: int, text: str) -> _Fact:
        """Schedule a fact line in ``session`` (at a random place among its others)."""
        made = _Fact(session, self.rng.random(), text)
        self.facts.append(made)
        return made


def _fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def _chatter(user: _User, *templates: str) -> list[str]:
    """``templates`` filled alike (one value per slot, none of the user's own facts)."""
    values: dict[str, str] = {}
    for name in (n for t in templates for n in _fields(t)):
        if name not in values:
            taken = user.used | set(values.values())
            values[name] = user.rng.choice([v for v in _POOLS[name] if v not in taken])
    return [t.format(**values) for t in templates]


def _question(rng: random.Random, templates: Sequence[str], slots: dict[str, str]) -> str:
    """One of ``templates`` with ``slots``, sometimes after a lead-in an agent might add."""
    text = rng.choice(templates).format(**slots)
    lead = rng.choice(_LEAD_INS)
    return lead + text[0].lower() + text[1:] if lead else text


def _update_topic(
    user: _User, topic: Topic, slots: dict[str, str], *, paraphrased: bool = True
) -> None:
    """Old value, maybe restated; the change; maybe the new value restated; questions."""
    rng, n = user.rng, user.sessions
    old, new = user.pick(topic.values), user.pick(topic.values)
    s_old = rng.randint(0, n - 3)
    s_new = rng.randint(s_old + 1, n - 2)
    olds = [user.fact(s_old, rng.choice(topic.state).format(v=old, **slots))]
    if s_new - s_old > 1 and rng.random() < 0.35:
        again = rng.randint(s_old + 1, s_new - 1)
        olds.append(user.fact(again, rng.choice(topic.restate).format(v=old, **slots)))
    change = rng.choice(topic.update)
    news = [user.fact(s_new, change.format(old=old, new=new, **slots))]
    if rng.random() < 0.5:
        again = rng.randint(s_new + 1, n - 1)
        news.append(user.fact(again, rng.choice(topic.restate).format(v=new, **slots)))
    ask = _question(rng, topic.ask, slots)
    user.questions.append(_Draft(topic.category, topic.name, ask, new, news, olds, paraphrased))
    if topic.ask_before and rng.random() < 0.35:
        before = _question(rng, topic.ask_before, slots)
        told = olds + (news[:1] if "{old}" in change else [])
        user.questions.append(_Draft(PREVIOUS, topic.name, before, old, told, [], paraphrased))


def _plain_topic(user: _User, topic: Topic, slots: dict[str, str]) -> None:
    rng, n = user.rng, user.sessions
    value = user.pick(topic.values)
    s = rng.randint(0, n - 2)
    told = [user.fact(s, rng.choice(topic.state).format(v=value, **slots))]
    if rng.random() < 0.4:
        told.append(
            user.fact(rng.randint(s + 1, n - 1), rng.choice(topic.restate).format(v=value, **slots))
        )
    ask = _question(rng, topic.ask, slots)
    user.questions.append(_Draft(topic.category, topic.name, ask, value, told))


def _relative(user: _User, rel: str, rel_q: str) -> None:
    """Two-hop: the relative's name in one session, their job in another; asked about
    by another word for the relation, or (half the time) the user's own."""
    rng, n = user.rng, user.sessions
    name, job = user.pick(words.FIRST_NAMES), user.pick(RELATIVE_JOBS)
    first, second = rng.sample(range(n), 2)
    intro = user.fact(first, rng.choice(RELATIVE_INTRO).format(rel=rel, name=name))
    work = user.fact(second, rng.choice(RELATIVE_JOB).format(name=name, job=job))
    literal = rng.random() < 0.5
    ask = _question(rng, RELATIVE_ASK, {"rel_q": rel if literal else rel_q})
    user.questions.append(_Draft(TWO_HOP, "relative", ask, job, [intro, work], [], not literal))


def _plan(user: _User) -> None:
    """Choose the user's topics, appointments and relatives; schedule their facts."""
    rng = user.rng
    for topic in rng.sample(CHANGING + PLAIN_TOPICS, rng.randint(9, 12)):
        slots = {name: rng.choice(pool) for name, pool in topic.slots.items()}
        (_plain_topic if topic in PLAIN_TOPICS else _update_topic)(user, topic, slots)
    for stated, asked in rng.sample(EVENTS, rng.randint(2, 3)):
        literal = rng.random() < 0.5  # half the time asked by the name the user gave it
        slots = {"event": stated, "event_q": stated if literal else asked}
        _update_topic(user, APPOINTMENT, slots, paraphrased=not literal)
    by_question: dict[str, tuple[str, str]] = {}
    for rel, rel_q in rng.sample(RELATIONS, len(RELATIONS)):
        by_question.setdefault(rel_q, (rel, rel_q))  # one "spouse" at most
    for rel, rel_q in list(by_question.values())[: rng.randint(1, 3)]:
        _relative(user, rel, rel_q)


def _filler(user: _User) -> list[tuple[str, str]]:
    """One block of chatter: (speaker, text) lines."""
    rng = user.rng
    kind = rng.choices(("task", "small", "trap", "ack"), weights=(5, 2, 3, 1))[0]
    if kind == "task":
        request, answer = _chatter(user, *rng.choice(chat.TASKS))
        lines = [("user", request), ("assistant", answer)]
        if rng.random() < 0.5:
            lines.append(("user", rng.choice(chat.ACK_USER)))
            if rng.random() < 0.4:
                lines.append(("assistant", rng.choice(chat.ACK_ASSISTANT)))
        return lines
    if kind == "small":
        said, reply = rng.choice(chat.SMALL_TALK)
        return [("user", said), ("assistant", reply)]
    if kind == "trap":
        lines = [("user", _chatter(user, rng.choice(chat.TRAPS))[0])]
        if rng.random() < 0.6:
            lines.append(("assistant", rng.choice(chat.FACT_REPLIES)))
        return lines
    return [("user", rng.choice(chat.ACK_USER)), ("assistant", rng.choice(chat.ACK_ASSISTANT))]


Line = tuple[str, str] | _Fact


def _session_lines(user: _User, s: int) -> list[Line]:
    """Greeting, chatter with the session's facts in order among it, goodbye."""
    rng = user.rng
    facts = sorted((f for f in user.facts if f.session == s), key=lambda f: f.order)
    fillers = [_filler(user) for _ in range(rng.randint(3, 6))]
    places = sorted(rng.randint(0, len(fillers)) for _ in facts)
    lines: list[Line] = []
    if rng.random() < 0.8:
        lines += [("user", rng.choice(chat.GREET_USER))]
        lines += [("assistant", rng.choice(chat.GREET_ASSISTANT))]
    for i in range(len(fillers) + 1):
        for fact in (f for f, p in zip(facts, places, strict=True) if p == i):
            lines.append(fact)
            if rng.random() < 0.8:
                lines.append(("assistant", rng.choice(chat.FACT_REPLIES)))
            if rng.random() < 0.2:
                lines.append(("user", rng.choice(chat.ACK_USER)))
        if i < len(fillers):
            lines += fillers[i]
    if rng.random() < 0.7:
        lines += [("user", rng.choice(chat.BYE_USER))]
        lines += [("assistant", rng.choice(chat.BYE_ASSISTANT))]
    return lines


def _sessions(user: _User, start: date) -> list[Turn]:
    """Every session of the user as turns, a few days to three weeks apart."""
    rng = user.rng
    turns: list[Turn] = []
    day = start
    for s in range(user.sessions):
        sid = f"{user.uid}-s{s:02d}"
        lines = _session_lines(user, s)
        at = datetime(day.year, day.month, day.day, rng.randint(7, 20), tzinfo=UTC).timestamp()
        for t, line in enumerate(lines):
            at += rng.randint(20, 240)
            tid = f"{sid}-t{t:03d}"
            if isinstance(line, _Fact):
                line.turn_id = tid
                turns.append(Turn(tid, user.uid, sid, "user", line.text, at, "fact"))
            else:
                turns.append(Turn(tid, user.uid, sid, line[0], line[1], at))
        day += timedelta(days=rng.randint(2, 21))
    return turns


def generate(seed: int = 0, users: int = 10) -> AssistantLog:
    """The log of ``users`` users (10 to 14 sessions each) and the questions about it."""
    turns: list[Turn] = []
    questions: list[Question] = []
    for k in range(users):
        rng = random.Random(f"assistant-log:{seed}:{k}")
        user = _User(f"u{k:02d}", rng, rng.randint(10, 14))
        _plan(user)
        start = _EPOCH + timedelta(days=rng.randint(0, 200))
        turns += _sessions(user, start)
        questions += [
            Question(
                f"{user.uid}-q{n:02d}",
                user.uid,
                d.category,
                d.topic,
                d.text,
                d.answer,
                tuple(f.turn_id for f in d.told),
                tuple(f.turn_id for f in d.old),
                d.paraphrased,
            )
            for n, d in enumerate(user.questions)
        ]
    return AssistantLog(seed, tuple(turns), tuple(questions))
