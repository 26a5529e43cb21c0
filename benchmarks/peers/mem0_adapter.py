"""mem0ai 2.2.1 with its Redis vector store on the peer protocol (in benchmarks/peers/.venv-mem0).

``Memory.from_config`` with ``vector_store.provider = "redis"`` (redisvl
0.27.2) on the given Redis and the ``openai`` embedder pointed at the shared
endpoint (``openai_base_url``, ``embedding_dims``). No LLM is reachable here,
so every write is ``add(..., infer=False)``: the message is stored as is
(embedded, loaded into the index, a history row in SQLite), synchronously;
the LLM config points at a closed local port so that a call would fail at
once. One ``add`` per turn (``user_id`` = the conversation, the dia_id in
``metadata``). Search: ``search(question, top_k=10, filters={"user_id": ...})``
with the defaults: semantic KNN (over-fetching 60) + BM25 on the raw query
(redisvl ``TextQuery``), scores added; spaCy (``mem0ai[nlp]``) is not
installed, since its model ``en_core_web_sm`` is downloaded from outside the
registries at run time, so there is no query lemmatization and no entity boost.
Telemetry off (``MEM0_TELEMETRY=False``).

Run:  benchmarks/peers/.venv-mem0/bin/python benchmarks/peers/mem0_adapter.py \
        --redis-url URL --embed-url URL [--conversations N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocol import Conversation, Turn, ask_all, emit, load, log, wait_until, write_all

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported (in run)
os.environ.setdefault("OPENAI_API_KEY", "local-no-key")
warnings.filterwarnings("ignore", category=DeprecationWarning)

COLLECTION = "mem0_locomo"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import redis
    from mem0 import Memory

    convs = load(limit=args.conversations)
    tmp = tempfile.mkdtemp(prefix="mem0-")
    config = {
        "vector_store": {
            "provider": "redis",
            "config": {
                "redis_url": args.redis_url,
                "collection_name": COLLECTION,
                "embedding_model_dims": args.dims,
            },
        },
        "embedder": {
            "provider": "openai",
            "config": {
                "model": args.model,
                "openai_base_url": args.embed_url,
                "embedding_dims": args.dims,
                "api_key": "local-no-key",
            },
        },
        "llm": {  # never called with infer=False; a closed port if it were
            "provider": "openai",
            "config": {
                "model": "none",
                "api_key": "none",
                "openai_base_url": "http://127.0.0.1:9/v1",
            },
        },
        "history_db_path": f"{tmp}/history.db",
    }
    memory = Memory.from_config(config)
    r = redis.Redis.from_url(args.redis_url)

    async def write(conv: Conversation, turn: Turn) -> None:
        memory.add(
            [{"role": "user", "content": turn.content}],
            user_id=conv.id,
            metadata={"dia_id": turn.dia_id},
            infer=False,
        )

    result: dict[str, Any] = await write_all(convs, write)
    expected = result["turns_written"]

    async def indexed() -> bool:
        return int(r.ft(COLLECTION).info()["num_docs"]) >= expected

    result["searchable_after_s"] = await wait_until(indexed, every_s=0.01)
    result["indexed"] = int(r.ft(COLLECTION).info()["num_docs"])
    log(f"mem0: {result}")

    async def search(conv: Conversation, question: str) -> list[str]:
        found = memory.search(question, top_k=10, filters={"user_id": conv.id})
        return [str((m.get("metadata") or {}).get("dia_id", "")) for m in found["results"]]

    result.update(await ask_all(convs, search))
    result.update(
        system="mem0ai 2.2.1",
        config="embedder held equal, infer=False",
        conversations=len(convs),
        embedder=f"openai/{args.model} via the shared endpoint (openai client)",
        contextual="none",
        workers="none (synchronous, in-process)",
        search="vector KNN + BM25 (redisvl), no spaCy",
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--embed-url", required=True)
    parser.add_argument("--model", default="static-e5-multilingual-256")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--log-dir", default="/tmp")
    args = parser.parse_args()
    started = time.perf_counter()
    result = asyncio.run(run(args))
    result["wall_s"] = time.perf_counter() - started
    emit(result)


if __name__ == "__main__":
    main()
