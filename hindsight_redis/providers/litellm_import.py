"""litellm, imported once, lazily, the way every caller here needs it.

litellm is slow to import (about a second), fetches its model cost map over the
network on import unless told to read the local copy, and prints a "Give
Feedback / Get Help" banner on stdout for every error it maps: importing it only
through ``load_litellm`` keeps all three out of a user's way.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


@cache
def load_litellm() -> ModuleType:
    """The ``litellm`` module, with the local model table and its banners off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    # Its response models finish their pydantic schemas on first use, which warns that a
    # TypedDict item is ReadOnly: built here, so that warning never reaches a caller (nor
    # fails a call under ``-W error``, as it did after an embedding call had loaded it).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*ReadOnly.*", category=UserWarning)
        with contextlib.suppress(Exception):  # another release may build them otherwise
            litellm.ModelResponse()
    return litellm
