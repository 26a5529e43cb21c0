"""The LoCoMo dev file and the corpora the benchmarks make from it (standard library only).

The file is ``HINDSIGHT_LOCOMO``, else ``../shared/data/locomo/locomo_dev.json`` beside the
repository (5 conversations, 2,760 turns). A turn is written as an agent records a chat line,
``"Speaker: text"``; the scored questions are those of categories 1-4 that cite evidence.
Parameters were chosen on conversations 0-2 (dev); 3-4 are held out.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
HELD_OUT = 2  # conversations after this index were not used to choose parameters
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def path() -> Path:
    """The LoCoMo dev file (``HINDSIGHT_LOCOMO`` overrides the default location)."""
    return Path(os.environ.get("HINDSIGHT_LOCOMO", str(DEFAULT)))


def load() -> list[dict[str, Any]]:
    """The conversations of the file, as stored."""
    data: list[dict[str, Any]] = json.loads(path().read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class Turn:
    """One dialogue turn."""

    conversation: str  # the sample id
    dia_id: str  # what questions cite as evidence
    speaker: str
    text: str
    date: str  # its session's date, as the file writes it ("1:56 pm on 8 May, 2023")

    @property
    def content(self) -> str:
        """The turn as an agent would write it."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    """A scored question: its conversation, category and the turns it cites."""

    text: str
    conversation: str
    category: int
    evidence: frozenset[str]
    held_out: bool


def turns(data: list[dict[str, Any]] | None = None) -> list[Turn]:
    """Every turn of ``data`` (default: the whole file), in order."""
    out = []
    for conv in load() if data is None else data:
        talk = conv["conversation"]
        for key, value in talk.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
                date = str(talk.get(f"{key}_date_time", ""))
                out += [
                    Turn(conv["sample_id"], t["dia_id"], t["speaker"], t["text"], date)
                    for t in value
                ]
    return out


def texts() -> list[str]:
    """Every turn of the file as ``"Speaker: text"``."""
    return [turn.content for turn in turns()]


def evidence_ids(raw: list[str]) -> frozenset[str]:
    """Cited dia_ids, tolerant of the dataset's odd separators."""
    return frozenset(p for item in raw for p in re.split(r"[;,\s]+", item) if p)


def questions(data: list[dict[str, Any]] | None = None) -> list[Question]:
    """The scored questions of ``data`` (default: the whole file)."""
    return [
        Question(
            qa["question"],
            conv["sample_id"],
            qa["category"],
            evidence_ids(qa["evidence"]),
            n > HELD_OUT,
        )
        for n, conv in enumerate(load() if data is None else data)
        for qa in conv["qa"]
        if qa.get("category") in CATEGORIES and qa.get("evidence")
    ]


def session_time(text: str) -> float | None:
    """A session date ("1:56 pm on 8 May, 2023") as unix seconds (UTC); None if not one."""
    try:
        moment = datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None
    return moment.timestamp()


def derived_texts(count: int) -> list[str]:
    """``count`` turns: the file's, repeated as needed; a repeat gets a word suffix (no
    digits, which the write scorer would count as a signal), so the filters and dedup see
    what real turns look like."""
    base = texts()
    words = ["alpha", "bravo", "delta", "echo", "kilo", "lima", "oscar", "tango"]
    return [
        base[n % len(base)]
        + "".join(f" {words[(n // len(base) + k) % 8]}" for k in range(n // len(base)))
        for n in range(count)
    ]


class Sentences:
    """Memories with a natural vocabulary: a speaker and 1-3 sentences of random turns.

    Unlike templates, word frequencies follow real dialogue (a long tail, few very common
    content words); queries are LoCoMo's own questions (every category).
    """

    def __init__(self) -> None:
        data = load()
        said = turns(data)
        self.speakers = [turn.speaker for turn in said]
        self.sentences = [s for turn in said for s in _SENTENCE.split(turn.text) if s.strip()]
        self.questions: list[str] = [qa["question"] for conv in data for qa in conv["qa"]]

    def text(self, rng: random.Random) -> str:
        """One memory."""
        picked = [rng.choice(self.sentences) for _ in range(rng.randint(1, 3))]
        return f"{rng.choice(self.speakers)}: {' '.join(picked)}"

    def query(self, rng: random.Random) -> str:
        """One question."""
        return rng.choice(self.questions)
