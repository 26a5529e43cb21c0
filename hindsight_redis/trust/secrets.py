"""Secrets and personal data a write may not store: found, and masked by placeholders.

Pure module: no I/O. ``find_secrets`` returns what a text holds (``Finding``: kind
and span); ``mask_secrets`` replaces each by ``[secret:<kind>]``. What a write
carries is scanned field by field: its content, its context, its source and each of
its tags (``screen_fields`` before the write is validated, ``scan_event`` on an
event read from the stream); the identifiers (agent, session, task type) are not,
they are names a filter matches exactly.

Kinds: keys and tokens by their form (``trust.formats``: ``private-key``,
``aws-key``, ``aws-secret``, ``google-key``, ``azure-key``, ``github-token``,
``gitlab-token``, ``slack-token``, ``slack-webhook``, ``discord-webhook``,
``stripe-key``, ``openai-key``, ``anthropic-key``, ``sendgrid-key``,
``twilio-key``, ``telegram-token``, ``api-token``, ``jwt``, ``url-credentials``),
personal numbers (``card-number``, ``ssn``, ``cn-id``) and what words state
(``trust.prose``: ``password``, ``token``).

Speed: every write is scanned, so ``might_hold_secret`` looks first, with a few
operations the C library runs over the text at once (one translation of its bytes
that folds case and marks digits, ``@`` and ``-``, then a search for "p"):
almost every secret holds four digits, an ``@`` or a long token; the rest are stated
with "passw...", "pwd" or in Chinese, or armoured ("-----BEGIN"). 99.8% of LoCoMo's
turns have none of these and never reach the detectors; ``might_hold_secrets`` looks
at a whole batch joined (``write_many``), about 0.4 us a turn
(``benchmarks/secrets.py``). The detectors themselves are chosen by the clues a text
holds (``_detectors``).
"""

from __future__ import annotations

import dataclasses
import operator
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate, compress
from typing import Any

from hindsight_redis.core.models import MemoryEvent
from hindsight_redis.trust.formats import (
    Detector,
    Finding,
    armoured_keys,
    aws_secrets,
    numbers,
    token_formats,
    url_credentials,
)
from hindsight_redis.trust.prose import (
    COMMAND_CLIENTS,
    assigned,
    command_lines,
    stated_keys,
    stated_passwords,
)

DETECTORS: tuple[Detector, ...] = (
    armoured_keys,
    token_formats,
    aws_secrets,
    url_credentials,
    numbers,
    assigned,
    stated_passwords,
    command_lines,
    stated_keys,
)
"""Every detector, in the order their kinds win when findings overlap."""

__all__ = [
    "Finding",
    "find_secrets",
    "mask_secrets",
    "might_hold_secret",
    "placeholder",
    "scan_event",
    "screen_fields",
]

PLACEHOLDER = re.compile(r"\[secret:[a-z0-9-]+\]")
"""What a masked secret reads as."""

# A text seen as one byte per character (latin-1, "?" for what it cannot encode),
# case folded, its ASCII digits and "@" made NUL, its "-" made "p": one C pass,
# positions kept. The armour "-----" is then "ppppp", found with the password cues by
# one pattern whose branches all start with "p" (the engine skips from "p" to "p").
_MARK = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@-",
    b"abcdefghijklmnopqrstuvwxyz" + b"\0" * 11 + b"p",
)
_ARMOUR = b"ppppp"
_P_WORD = re.compile(b"pass|pw|" + _ARMOUR)
# What makes a "pass" or "pw" at a position a cue: passw(ord), passc(ode), passp(hrase),
# "pass phrase", "pass:", "pass=", "pass is", "pw", "pwd" (a word).
_PASS_CUE = re.compile(rb"pass(?:w|c|p|[ -]?ph|\s*[:=\"']|\s+(?:is|was)\b)|pwd?(?![a-z])")
_HAN_CUES = ("密", "口令", "钥", "令牌")
_HAN_PASSWORD_CUES = ("密码", "密碼", "口令", "码")
_KEY_CUES = ("key", "token", "secret", "credential", "auth", "密钥", "秘钥", "私钥", "令牌")
_NUMBER_WORDS = (
    "pin",
    "code",
    "combination",
    "wi",
    "wlan",
    "wpa",
    "login",
    "cred",
    "account",
    "user",
    "otp",
    "log in",
    "combo",
)
_NUMBER_CUES = re.compile(
    r"\b(?:pins?|codes?|combinations?|wi-?fi|wlan|wpa2?|logins?|creds|credentials?|account"
    r"|user(?:name)?|otps?|log in|combos?)\b"
)
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-.+/=~%:]{16}")
_URL_CLUES = ("?", "&", ";")
_SCANNED = ("content", "context", "source")


def placeholder(kind: str) -> str:
    """What a secret of ``kind`` is replaced by: ``[secret:<kind>]``."""
    return f"[secret:{kind}]"


def _marked(text: str) -> bytes:
    """``text`` as one byte per character, case folded, its digits and ``@`` NUL."""
    return text.encode("latin-1", "replace").translate(_MARK)


def _cue_at(marked: bytes, at: int, start: int = 0) -> bool:
    """Whether the "pass", "pw" or armour at ``marked[at]`` is a cue: "passw...",
    "passcode", "pass:"... anywhere (DB_PASSWORD), "pw" and "pwd" as words, "-----"
    (``start``: where the text begins in ``marked``)."""
    if marked.startswith(_ARMOUR, at):
        return True
    if at > start and marked[at - 1 : at].isalpha() and marked[at + 1] != ord("a"):
        return False
    return _PASS_CUE.match(marked, at) is not None


def _numbers_clue(text: str, marked: bytes) -> bool:
    """Whether the digits (or ``@``) of a text may be a secret's: an ``@`` (a URL's
    credentials), four digits or more (a PIN, a card...), fewer in a long token, or in a
    pair written "user / password"."""
    return (
        "@" in text
        or marked.count(b"\0") >= 4
        or " / " in text
        or _LONG_RUN.search(text) is not None
    )


def _clue(text: str, marked: bytes) -> bool:
    """``might_hold_secret`` of ``text`` seen as ``marked``."""
    if b"\0" in marked and _numbers_clue(text, marked):
        return True
    if any(_cue_at(marked, word.start()) for word in _P_WORD.finditer(marked)):
        return True
    return not text.isascii() and any(cue in text for cue in _HAN_CUES)


def might_hold_secret(text: str) -> bool:
    """False when ``text`` certainly holds no secret the detectors find: no ``@``, fewer
    than four digits and no long token, no password cue ("passw...", "pwd", "pass:"), no
    private key armour ("-----"), no Chinese cue (密, 口令, 钥, 令牌)."""
    return _clue(text, _marked(text))


def might_hold_secrets(texts: Sequence[str]) -> list[int]:
    """The positions of the ``texts`` that ``might_hold_secret``: the same tests, on all
    of them joined (a batch of 500 turns costs half of asking each)."""
    joined = "".join(texts)  # no separator: a cue across two texts only adds a suspect
    ascii_only = joined.isascii()
    marked = (joined.encode() if ascii_only else joined.encode("latin-1", "replace")).translate(
        _MARK
    )
    ends = list(accumulate(map(len, texts)))
    found: set[int] = set()
    at = marked.find(b"\0")
    while at >= 0:
        n = bisect_right(ends, at)
        if _numbers_clue(texts[n], marked[ends[n] - len(texts[n]) : ends[n]]):
            found.add(n)
        if n + 1 >= len(ends):
            break
        at = marked.find(b"\0", ends[n])
    for word in _P_WORD.finditer(marked):
        n = bisect_right(ends, word.start())
        if _cue_at(marked, word.start(), ends[n - 1] if n else 0):
            found.add(n)
    if not ascii_only:
        others = compress(range(len(texts)), map(operator.not_, map(str.isascii, texts)))
        found.update(n for n in others if any(cue in texts[n] for cue in _HAN_CUES))
    return sorted(found)


def _detectors(text: str) -> list[Detector]:
    """The detectors worth running on ``text`` (which ``might_hold_secret``), most
    specific first: each needs a clue the text holds (a long token, a digit, an ``@``,
    a cue word), so a text with a date in it does not go through all of them."""
    lower = text.lower()
    raw = text.encode("latin-1", "replace")
    marked = raw.translate(_MARK)
    digits = len(raw.translate(None, b"0123456789")) != len(raw)
    long_run = _LONG_RUN.search(text) is not None
    passwords = any(_cue_at(marked, word.start()) for word in _P_WORD.finditer(marked)) or (
        not text.isascii() and any(c in text for c in _HAN_PASSWORD_CUES)
    )
    passwords = passwords or (
        digits
        and any(cue in lower for cue in _NUMBER_WORDS)
        and _NUMBER_CUES.search(lower) is not None
    )
    keys = (digits or long_run) and any(cue in lower for cue in _KEY_CUES)
    chosen: list[Detector] = []
    if "-----" in text or "putty-user-key" in lower or "age-secret-key" in lower:
        chosen.append(armoured_keys)
    if long_run:
        chosen += [token_formats, aws_secrets]
    if "@" in text or ("=" in text and any(clue in text for clue in _URL_CLUES)):
        chosen.append(url_credentials)
    if digits:
        chosen.append(numbers)
    if passwords or keys:
        chosen.append(assigned)
    if passwords:
        chosen.append(stated_passwords)
    if " -" in text and any(client in lower for client in COMMAND_CLIENTS):
        chosen.append(command_lines)
    if keys:
        chosen.append(stated_keys)
    return chosen


def find_secrets(text: str) -> list[Finding]:
    """The secrets of ``text``, in order, overlaps merged (the kind of the first detector
    that found any part of them wins); placeholders already there are not findings."""
    if not text or not might_hold_secret(text):
        return []
    found: list[tuple[int, int, int, str]] = []
    for detector in _detectors(text):
        rank = DETECTORS.index(detector)
        for finding in detector(text):
            if finding.end > finding.start:
                found.append((finding.start, finding.end, rank, finding.kind))
    if not found:
        return []
    kept = [span.span() for span in PLACEHOLDER.finditer(text)]
    found = [f for f in found if not any(f[0] < end and start < f[1] for start, end in kept)]
    found.sort()
    merged: list[tuple[int, int, int, str]] = []
    for start, end, rank, kind in found:
        if merged and start < merged[-1][1]:
            first = merged[-1]
            best = (rank, kind) if rank < first[2] else (first[2], first[3])
            merged[-1] = (first[0], max(end, first[1]), *best)
        else:
            merged.append((start, end, rank, kind))
    return [Finding(kind, start, end) for start, end, _, kind in merged]


def mask_secrets(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with each secret replaced by its placeholder, and the kinds found (each
    once, in order); ``(text, ())`` when it holds none."""
    findings = find_secrets(text)
    if not findings:
        return text, ()
    parts = []
    last = 0
    for finding in findings:
        parts += [text[last : finding.start], placeholder(finding.kind)]
        last = finding.end
    parts.append(text[last:])
    return "".join(parts), tuple(dict.fromkeys(f.kind for f in findings))


def _masked_tags(tags: Sequence[Any], kinds: list[str]) -> list[Any] | None:
    """The tags with their secrets masked (``kinds`` gains those found); None if none."""
    out: list[Any] = []
    changed = False
    for tag in tags:
        if isinstance(tag, str):
            masked, found = mask_secrets(tag)
            if found:
                changed = True
                kinds.extend(found)
                tag = masked
        out.append(tag)
    return out if changed else None


def screen_fields(fields: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """A write's fields (``core.requests.WriteItem``) with the secrets of its content,
    context, source and tags masked, and the kinds found; None when they hold none.

    Runs before the write is validated (so a context is scanned whole, before it is cut
    to what is kept); fields of the wrong type are left for validation to refuse.
    """
    kinds: list[str] = []
    changed: dict[str, Any] = {}
    for name in _SCANNED:
        value = fields.get(name)
        if isinstance(value, str) and value:
            masked, found = mask_secrets(value)
            if found:
                changed[name] = masked
                kinds.extend(found)
    tags = fields.get("tags")
    if tags and isinstance(tags, list | tuple):
        masked_tags = _masked_tags(tags, kinds)
        if masked_tags is not None:
            changed["tags"] = masked_tags
    if not kinds:
        return None
    return {**fields, **changed}, tuple(dict.fromkeys(kinds))


def scan_event(event: MemoryEvent) -> tuple[MemoryEvent, tuple[str, ...]]:
    """``event`` with the secrets of its content, context, source and tags masked, and
    the kinds found; ``(event, ())`` when it holds none."""
    screened = screen_fields(
        {
            "content": event.content,
            "context": event.context,
            "source": event.source,
            "tags": event.tags,
        }
    )
    if screened is None:
        return event, ()
    fields, kinds = screened
    masked = dataclasses.replace(
        event,
        content=fields["content"],
        context=fields["context"],
        source=fields["source"],
        tags=tuple(fields["tags"]),
    )
    return masked, kinds


def secret_reason(kinds: Sequence[str]) -> str:
    """The hold reason (and drop detail) of a write holding secrets of ``kinds``:
    ``secret:aws-key,password``."""
    return "secret:" + ",".join(kinds)
