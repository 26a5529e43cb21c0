"""Lists and thresholds of the rule filter, from package data plus a user file.

The built-in file ``hindsight_redis/data/filters.toml`` is always read; the
file named by ``FilterSettings.filter_config`` (if any) is merged over it: a list
extends the built-in list under the same table and key, a scalar overrides the
built-in value. Phrases are normalised once here with the same function the
rule filter applies to texts, so users may write them any way they like.
"""

from __future__ import annotations

import logging
import re
import string
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hindsight_redis.errors import ConfigError

logger = logging.getLogger(__name__)

_BUILTIN = "filters.toml"
_SPACES = re.compile(r"\s+")
# Unicode categories removed by normalisation: punctuation, symbols (emoji
# included), marks that only decorate emoji (variation selectors), format chars.
_STRIPPED_CATEGORIES = ("P", "S", "Cf")
_EMOJI_MARKS = frozenset({"\ufe0e", "\ufe0f", "\u20e3"})
_ASCII_PUNCTUATION = str.maketrans({c: ("" if c == "'" else " ") for c in string.punctuation})


def normalize(text: str) -> str:
    """Casefold ``text``, drop punctuation, symbols and emoji, collapse spaces."""
    if text.isascii():  # fast path: NFKC is the identity, P/S are string.punctuation
        return _SPACES.sub(" ", text.lower().translate(_ASCII_PUNCTUATION)).strip()
    out: list[str] = []
    for ch in unicodedata.normalize("NFKC", text).casefold():
        if ch in _EMOJI_MARKS or unicodedata.category(ch).startswith(_STRIPPED_CATEGORIES):
            # Apostrophes inside words ("you're") are removed, not split.
            out.append("" if ch in "'’" else " ")
        else:
            out.append(ch)
    return _SPACES.sub(" ", "".join(out)).strip()


@dataclass(frozen=True, slots=True)
class FilterConfig:
    """What the rule filter needs: phrase sets, script weights and thresholds."""

    acks: frozenset[str]
    fillers: frozenset[str]
    script_weights: Mapping[str, float]
    min_weight: float = 6.0
    duplicate_window: int = 4096
    ack_max_chars: int = 80

    def weight(self, script: str) -> float:
        """The per-character weight of ``script`` (``"other"`` when unlisted)."""
        return self.script_weights.get(script, self.script_weights.get("other", 1.0))


def _read_builtin() -> dict[str, Any]:
    text = resources.files("hindsight_redis").joinpath("data").joinpath(_BUILTIN).read_text("utf-8")
    return tomllib.loads(text)


def _read_user(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as e:
        raise ConfigError(f"filter_config {path} does not exist") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"filter_config {path} is not valid TOML: {e}") from e


def merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``extra`` over ``base``: tables recurse, lists extend, scalars override."""
    merged: dict[str, Any] = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = merge(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            merged[key] = [*old, *value]
        elif isinstance(old, Mapping | list) or isinstance(value, Mapping | list):
            if old is not None:
                raise ConfigError(f"filter_config: {key!r} must be a {type(old).__name__}")
            merged[key] = value
        else:
            merged[key] = value
    return merged


def _phrases(table: object, name: str) -> frozenset[str]:
    if not isinstance(table, Mapping):
        raise ConfigError(f"filter_config: [{name}] must be a table of lists")
    phrases: set[str] = set()
    for lang, items in table.items():
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ConfigError(f"filter_config: {name}.{lang} must be a list of strings")
        phrases.update(p for p in (normalize(i) for i in items) if p)
    return frozenset(phrases)


def _number(table: Mapping[str, Any], key: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"filter_config: {key} must be a non-negative number")
    return float(value)


def build_config(data: Mapping[str, Any]) -> FilterConfig:
    """Validate merged TOML data and build a ``FilterConfig``."""
    thresholds = data.get("thresholds", {})
    weights = data.get("script_weights", {})
    if not isinstance(thresholds, Mapping) or not isinstance(weights, Mapping):
        raise ConfigError("filter_config: [thresholds] and [script_weights] must be tables")
    return FilterConfig(
        acks=_phrases(data.get("acks", {}), "acks"),
        fillers=_phrases(data.get("fillers", {}), "fillers"),
        script_weights={k: _number(weights, k, 1.0) for k in weights},
        min_weight=_number(thresholds, "min_weight", 6.0),
        duplicate_window=int(_number(thresholds, "duplicate_window", 4096)),
        ack_max_chars=int(_number(thresholds, "ack_max_chars", 80)),
    )


def load_filter_config(user_file: Path | None = None) -> FilterConfig:
    """The built-in filter config, with ``user_file`` (if given) merged over it."""
    data = _read_builtin()
    if user_file is not None:
        data = merge(data, _read_user(user_file))
        logger.debug("filter config merged from %s", user_file)
    return build_config(data)
