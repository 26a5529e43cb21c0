"""Tokens as models count them: tiktoken's ``cl100k_base``, offline.

Summaries are kept within a token budget, a search's hits within
``max_tokens``, and the fact comparison asks which words are one token.
tiktoken downloads encodings on first use; litellm ships this one, so it is
read from there (``ensure_tiktoken_cache``) and nothing is fetched.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base"


def ensure_tiktoken_cache() -> None:
    """Point tiktoken at litellm's bundled encodings when no cache dir is set.

    tiktoken downloads encodings on first use, which fails offline; litellm
    ships the cl100k_base file under the name tiktoken caches it by. tiktoken
    checks the file's hash, so a wrong file cannot be used silently.
    """
    if os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR"):
        return
    # find_spec locates the package without importing it (litellm is slow to import).
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return
    bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    if bundled.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)


def encoding() -> tiktoken.Encoding:
    """The ``cl100k_base`` encoding (tiktoken caches it after the first load)."""
    ensure_tiktoken_cache()
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """How many ``cl100k_base`` tokens ``text`` takes."""
    return len(encoding().encode(text, disallowed_special=()))


def truncate_tokens(text: str, budget: int) -> str:
    """``text`` cut to at most ``budget`` tokens (with an ellipsis when cut)."""
    enc = encoding()
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= budget:
        return text
    return enc.decode(tokens[: max(budget - 1, 1)]).rstrip() + "…"
