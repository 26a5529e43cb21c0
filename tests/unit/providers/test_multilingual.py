"""The multilingual model's threads: searches at normal priority, refiners at nice 19."""

from __future__ import annotations

import os
import sys

import pytest

from hindsight_redis.providers.multilingual import MultilingualE5
from hindsight_redis.providers.priority import normal_priority


def _nice_of(model: MultilingualE5, low: bool) -> int:
    return model._thread(low).submit(lambda: os.getpriority(os.PRIO_PROCESS, 0)).result()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's nice is Linux's")
def test_refiners_embed_at_the_lowest_priority_searches_do_not() -> None:
    model = MultilingualE5()
    process = os.getpriority(os.PRIO_PROCESS, 0)
    assert _nice_of(model, low=True) == 19  # a refiner's batch
    assert _nice_of(model, low=False) == process  # a search
    with normal_priority():  # the refine share's steps
        assert model._thread(True) is model._thread(False)
    assert model._thread(True) is not model._thread(False)
    assert os.getpriority(os.PRIO_PROCESS, 0) == process  # the caller's own is unchanged
