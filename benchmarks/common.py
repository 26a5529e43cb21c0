"""Shared benchmark helpers: an embedded Redis for the run, LoCoMo texts, percentiles."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

LOCOMO = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
)


def locomo_path() -> Path:
    """The LoCoMo dev file (``HINDSIGHT_LOCOMO`` overrides the default location)."""
    return Path(os.environ.get("HINDSIGHT_LOCOMO", str(LOCOMO)))


def locomo_turns() -> list[str]:
    """Every dialogue turn of the dev conversations as ``speaker: text``."""
    data = json.loads(locomo_path().read_text())
    turns = []
    for sample in data:
        conversation = sample["conversation"]
        for key, value in conversation.items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in value]
    return turns


@contextmanager
def embedded_redis(profile: str = "ephemeral") -> Iterator[str]:
    """A fresh embedded Redis on a free port for the run; yields its URL."""
    from hindsight_redis.server import EmbeddedServer, get_profile

    with tempfile.TemporaryDirectory(prefix="hs-bench-") as tmp:
        server = EmbeddedServer(Path(tmp), get_profile(profile), port=0)
        state = server.start()
        try:
            yield state.url
        finally:
            server.stop()


@contextmanager
def default_search_redis() -> Iterator[str]:
    """A redis-server with the search module loaded without arguments (its default GC:
    every 30 s, threshold 100, as on servers the project did not start); yields its URL."""
    import subprocess
    import time

    import redis

    from hindsight_redis.server import find_binaries, free_port

    binaries = find_binaries()
    search = next(m for m in binaries.modules if m.name.startswith("redisearch"))
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="hs-bench-") as tmp:
        proc = subprocess.Popen(
            [str(binaries.server), "--port", str(port), "--save", "", "--appendonly", "no",
             "--dir", tmp, "--loadmodule", str(search)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            client = redis.Redis(port=port)
            for _ in range(500):
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.02)
            client.close()
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait()


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def queue_memory(
    pipe: Any,
    keys: Any,
    info: Any,
    event: Any,
    vector: Any,
    context_vector: Any = None,
    extra: dict[str, str] | None = None,
) -> None:
    """Queue the HSET of one memory document on ``pipe``, bypassing the worker.

    For benchmarks that index synthetic data fast; the figures that count go
    through the public write path. ``context_vector`` fills the contextual
    field as a refiner would; ``extra`` overrides fields (access counts...).
    """
    from hindsight_redis.pipeline.base import Candidate
    from hindsight_redis.pipeline.commit import doc_from_candidate

    doc = doc_from_candidate(
        Candidate("0-0", event, event.content, embedding=vector),
        vector_field=info.vector_field,
        vector_datatype=info.datatype,
    )
    if context_vector is not None:
        import numpy as np

        from hindsight_redis.providers.projection import project
        from hindsight_redis.providers.vectors import vector_bytes
        from hindsight_redis.schema import CONTEXT_FIELD

        stored = project(np.asarray(context_vector)[None, :], info.context_projection)[0]
        doc[CONTEXT_FIELD] = vector_bytes(stored, info.context_datatype)
        doc["refine"] = "done"
    doc.update(extra or {})
    pipe.hset(keys.doc(event.event_id), mapping=doc)
