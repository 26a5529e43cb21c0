"""How the models share the CPU: the refiner's priority, and numpy's BLAS threads.

The refiner's model runs in a thread at nice 19 (``providers.contextual``), so that
ingest and searches take the cores first. The steps the refine share owes
(``pipeline.refining``) must progress on a host whose cores are busy, where such a
thread gets next to nothing: within ``normal_priority()`` (a context variable, so it
holds for the task that set it and nothing else) the model runs at normal priority.

``one_blas_thread()``: numpy hands a matrix product above a few thousand
multiplications to OpenBLAS, which splits it over a thread per core; those threads
then spin, waiting for the next product, for a while after each. The products here
are small (a refine step's 8 vectors projected to 256 dimensions, dedup among a
batch's 256 vectors, a search's candidates), so the second thread saves little, and
its spinning took the other core: a refine-only worker used 107 s of CPU for 61 s of
model work, 60 s with one BLAS thread (docs/decisions.md, "One BLAS thread"). The
processes that are ours (CLI workers, `mcp` with workers, `reindex`) run with one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
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


def lowest_priority() -> None:
    """Give the calling thread the lowest CPU priority (nice 19); Linux only, where a
    thread's nice value is its own (the threads it starts inherit it)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


@functools.cache
def one_blas_thread() -> None:
    """Run numpy's BLAS on one thread in this process from now on (once; a second call
    does nothing, nor would a second limit).

    For processes that are ours alone: it changes the whole process. At run time,
    through threadpoolctl (``OPENBLAS_NUM_THREADS`` counts only before numpy loads
    its BLAS, which this loads first).
    """
    import numpy  # noqa: F401  (its BLAS must be loaded to be limited)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
