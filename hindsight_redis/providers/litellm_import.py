"""litellm, imported once, lazily, the way every caller here needs it.

litellm is slow to import (about a second), fetches its model cost map over the
network on import unless told to read the local copy, and prints a "Give
Feedback / Get Help" banner on stdout for every error it maps: importing it only
through ``load_litellm`` keeps all three out of a user's way.
"""

from __future__ import annotations

import os
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
    return litellm
