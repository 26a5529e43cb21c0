"""Whether a low-priority model runs at normal CPU priority for the moment.

The refiner's model runs in a thread at nice 19 (``providers.contextual``), so that
ingest and searches take the cores first. The steps the refine share owes
(``pipeline.refining``) must progress on a host whose cores are busy, where such a
thread gets next to nothing: within ``normal_priority()`` (a context variable, so it
holds for the task that set it and nothing else) the model runs at normal priority.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_NORMAL: ContextVar[bool] = ContextVar("normal_priority", default=False)


@contextlib.contextmanager
def normal_priority() -> Iterator[None]:
    """Within it (this task only), low-priority models run at normal priority."""
    token = _NORMAL.set(True)
    try:
        yield
    finally:
        _NORMAL.reset(token)


def at_normal_priority() -> bool:
    """True within ``normal_priority``."""
    return _NORMAL.get()
