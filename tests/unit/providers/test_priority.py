"""One BLAS thread in the processes that are ours (``providers.priority``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_PROBE = """
import json, sys
from threadpoolctl import threadpool_info
if sys.argv[1] == "limit":
    from hindsight_redis.providers.priority import one_blas_thread
    one_blas_thread()
    one_blas_thread()  # a second call changes nothing
else:
    import numpy
print(json.dumps([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]))
"""


def _blas_threads(mode: str) -> list[int]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], env=env, capture_output=True, text=True, check=True
    )
    threads: list[int] = json.loads(out.stdout)
    return threads


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS has one thread anyway")
def test_numpy_blas_has_a_thread_per_core_by_default() -> None:
    # What one_blas_thread changes: without it, numpy's BLAS splits products over the cores.
    assert max(_blas_threads("default")) > 1


def test_one_blas_thread_limits_every_blas_numpy_loaded() -> None:
    threads = _blas_threads("limit")
    assert threads, "numpy loaded no BLAS that threadpoolctl knows"
    assert set(threads) == {1}
