"""Layer 1: cheap rules that drop what can never be a useful memory.

``check_rules`` is pure: it returns the drop reason of one text or None.
Reasons, in the order they are checked:

- ``rule:too_short``: empty, or lighter than ``min_weight`` once letters and
  digits are weighted by script (a Han character counts like three Latin
  letters, so "我对花生过敏" passes where "no" does not);
- ``rule:emoji_only`` / ``rule:punctuation_only``: no letter or digit at all;
- ``rule:ack``: made only of acknowledgement and filler phrases ("ok
  thanks!", "好的，谢谢", "了解です"); a text with anything else in it is kept.

``RuleFilter`` applies them to a batch and also drops exact repeats of a
recent write (``rule:duplicate``) within a bounded per-worker window.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence

from hindsight_redis.core.documents import claim_digest
from hindsight_redis.core.text import UNSPACED, script_of
from hindsight_redis.language.speaker import strip_speaker_label
from hindsight_redis.pipeline.stages.base import Candidate, alive
from hindsight_redis.pipeline.stages.filter_config import FilterConfig, normalize

ACK = "rule:ack"
TOO_SHORT = "rule:too_short"
EMOJI_ONLY = "rule:emoji_only"
PUNCTUATION_ONLY = "rule:punctuation_only"
DUPLICATE = "rule:duplicate"


def text_weight(text: str, config: FilterConfig) -> float:
    """The script-weighted length of ``text``: letters and digits only."""
    return sum(config.weight(script_of(ch)) for ch in text if ch.isalnum())


def weighs_at_least(text: str, config: FilterConfig, threshold: float) -> bool:
    """``text_weight(text) >= threshold``, stopping as soon as it is reached."""
    total = 0.0
    for ch in text:
        if ch.isalnum():
            total += config.weight(script_of(ch))
            if total >= threshold:
                return True
    return total >= threshold


def _is_emoji(ch: str) -> bool:
    code = ord(ch)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or code in (0x200D, 0xFE0F, 0x20E3)
        or unicodedata.category(ch) == "So"
    )


def _symbols_reason(text: str) -> str:
    """The reason for a text with no letter or digit in it."""
    if any(_is_emoji(ch) for ch in text):
        return EMOJI_ONLY
    if any(not ch.isspace() for ch in text):
        return PUNCTUATION_ONLY
    return TOO_SHORT


def _boundary(s: str, end: int) -> bool:
    """True when a phrase may end at ``end`` (not in the middle of a spaced word)."""
    if end == len(s) or s[end] == " ":
        return True
    left, right = s[end - 1], s[end]
    unspaced = (left.isalnum() and script_of(left) in UNSPACED) or (
        right.isalnum() and script_of(right) in UNSPACED
    )
    return unspaced


@functools.lru_cache(maxsize=16)
def _by_first_char(phrases: frozenset[str], fillers: frozenset[str]) -> dict[str, list[str]]:
    """The phrases and fillers by their first character (built once per filter config)."""
    by_first: dict[str, list[str]] = {}
    for w in phrases | fillers:
        by_first.setdefault(w[0], []).append(w)
    return by_first


def only_phrases(s: str, phrases: frozenset[str], fillers: frozenset[str]) -> bool:
    """True when normalised ``s`` is fully covered by ``phrases`` and ``fillers``."""
    by_first = _by_first_char(phrases, fillers)
    reach = [False] * (len(s) + 1)
    reach[0] = True
    for i, ch in enumerate(s):
        if not reach[i]:
            continue
        if ch == " ":
            reach[i + 1] = True
            continue
        for w in by_first.get(ch, ()):
            end = i + len(w)
            if s.startswith(w, i) and _boundary(s, end):
                reach[end] = True
    return reach[len(s)]


# "Caroline: ...", "Dr. Wu: ...", "用户: ..." at the very start of a text.
def check_rules(text: str, lists: FilterConfig) -> str | None:
    """The drop reason of ``text`` under the rules of ``lists``, or None to keep it.

    A leading speaker label is not content: "Mel: thanks!" is an acknowledgement.
    """
    text = strip_speaker_label(text)
    if not text.strip():
        return TOO_SHORT
    if not any(ch.isalnum() for ch in text):
        return _symbols_reason(text)
    # Normalising only shrinks text by punctuation, symbols and spaces: a long
    # text cannot be a bare acknowledgement, so skip the costly check for it.
    if len(text) <= 4 * lists.ack_max_chars:
        norm = normalize(text)
        if (
            norm
            and len(norm) <= lists.ack_max_chars
            and only_phrases(norm, lists.acks, lists.fillers)
        ):
            return ACK
    if not weighs_at_least(text, lists, lists.min_weight):
        return TOO_SHORT
    return None


def content_key(candidate: Candidate) -> str:
    """The hash under which exact duplicates of ``candidate`` collide
    (``documents.claim_digest`` of its text and scope)."""
    event = candidate.event
    return claim_digest(
        event.namespace, event.agent_id, event.visibility, event.tags, candidate.content
    )


class RuleFilter:
    """Pipeline stage ``rules``: applies ``check_rules`` and the duplicate rule."""

    name = "rules"

    def __init__(self, config: FilterConfig) -> None:
        """Filter with the lists and thresholds of ``config``."""
        self.config = config
        self._recent: OrderedDict[str, str] = OrderedDict()

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Drop the alive candidates of ``batch`` a rule matches."""
        for candidate in alive(batch):
            reason = check_rules(candidate.content, self.config)
            if reason is not None:
                candidate.drop(reason, _detail(candidate.content))
            else:
                self._check_duplicate(candidate)

    def _check_duplicate(self, candidate: Candidate) -> None:
        window = self.config.duplicate_window
        if window <= 0:
            return
        key = content_key(candidate)
        first = self._recent.get(key)
        # A redelivery of the same stream entry is not a duplicate of itself.
        if first is not None and first != candidate.entry_id:
            self._recent.move_to_end(key)
            candidate.drop(DUPLICATE, f"same content as entry {first}")
            return
        self._recent[key] = candidate.entry_id
        self._recent.move_to_end(key)
        while len(self._recent) > window:
            self._recent.popitem(last=False)


def _detail(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
