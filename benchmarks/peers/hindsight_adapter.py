"""hindsight-redis on the peer protocol (project venv): write, wait until searchable, ask.

Two configurations:

- ``default``: the project as shipped: static embedder in-process (``local``)
  plus the MiniLM contextual vector added by the workers in the background;
- ``equal``: the embedder held equal to the peers: ``litellm:openai/<model>``
  against the shared endpoint, no contextual vector (one vector + BM25).

Every turn is one ``AsyncMemoryClient.write`` (content ``"Speaker: text"``,
source = dia_id, session_id = the conversation, the session date as a tag, as
``benchmarks/locomo_recall.py``), namespace = the conversation; worker
processes (``hindsight-redis worker --namespaces ...``, the default pipeline
with its filters) run beside the writer from the start. Searchable = every
accepted write processed (indexed, merged or dropped by the filters); for
``default`` the time until every memory has its contextual vector is reported
too, and the questions are asked after it (the quality the project documents).

Run (project root, venv active):
  python benchmarks/peers/hindsight_adapter.py --redis-url URL [--config equal --embed-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from protocol import Conversation, Turn, ask_all, emit, load, log, spawn, wait_until, write_all

from hindsight_redis import AsyncMemoryClient, Settings

ROOT = Path(__file__).resolve().parents[2]


def settings_for(args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    """The settings of this configuration, as keyword arguments."""
    base: dict[str, Any] = {
        "redis_url": args.redis_url,
        "key_prefix": prefix,
        "profile": "ephemeral",
        "max_backlog": 1_000_000,
    }
    if args.config == "equal":
        base.update(
            embedder=f"litellm:openai/{args.model}",
            embedding_api_base=args.embed_url,
            embedding_api_key="local-no-key",
            embedding_dims=args.dims,
            contextual_embedder="none",
        )
    return base


def worker_env(values: dict[str, Any]) -> dict[str, str]:
    """The same settings for the worker processes, as HINDSIGHT_* variables."""
    env = dict(os.environ)
    for key, value in values.items():
        env[f"HINDSIGHT_{key.upper()}"] = str(value)
    return env


async def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load(limit=args.conversations)
    prefix = f"peers{uuid.uuid4().hex[:6]}"
    values = settings_for(args, prefix)
    names = [c.id for c in convs]
    command = [
        sys.executable,
        "-m",
        "hindsight_redis.cli",
        "worker",
        "--namespaces",
        ",".join(names),
    ]
    workers = [
        spawn(
            command,
            f"{args.log_dir}/hindsight-{args.config}-worker{n}.log",
            env=worker_env(values),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        for n in range(args.workers)
    ]
    clients = {c.id: AsyncMemoryClient(Settings(namespace=c.id, **values)) for c in convs}
    try:
        # Ready: every worker is a live consumer of every namespace (models loaded).
        async def ready() -> bool:
            for client in clients.values():
                if len((await client.stats())["workers"]) < args.workers:
                    return False
            return True

        for client in clients.values():
            await client.connect()
        took = await wait_until(ready, 300, 0.2)
        log(f"hindsight[{args.config}]: workers ready after {took:.1f} s")

        async def write(conv: Conversation, turn: Turn) -> None:
            await clients[conv.id].write(
                turn.content, source=turn.dia_id, session_id=conv.id, tags=[turn.date]
            )

        result: dict[str, Any] = await write_all(convs, write)

        # Polled every 50 ms, and only the namespaces not done yet: stats are a few
        # round trips per namespace, and the workers share the 2 cores with this loop.
        waiting = set(clients)

        async def processed() -> bool:
            for name in sorted(waiting):
                s = await clients[name].stats()
                if s["processed"] >= s["accepted"] and not s["backlog"]:
                    waiting.discard(name)
            return not waiting

        result["searchable_after_s"] = await wait_until(processed, every_s=0.05)
        if args.config == "default":
            waiting = set(clients)

            async def refined() -> bool:
                for name in sorted(waiting):
                    if not (await clients[name].stats())["refine_pending"]:
                        waiting.discard(name)
                return not waiting

            extra = await wait_until(refined, every_s=0.1)
            result["refined_after_s"] = result["searchable_after_s"] + extra
        counts = {"indexed": 0, "merged": 0, "dropped": 0}
        for client in clients.values():
            s = await client.stats()
            counts["indexed"] += s["indexed"]
            counts["merged"] += s["merged"]
            counts["dropped"] += s["dropped"]["total"]
        result.update(counts)
        log(f"hindsight[{args.config}]: {result}")

        async def search(conv: Conversation, question: str) -> list[str]:
            hits = await clients[conv.id].search(question, top_k=10)
            return [h.source or "" for h in hits]

        result.update(await ask_all(convs, search))
    finally:
        for proc in workers:
            proc.send_signal(signal.SIGTERM)
        for proc in workers:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        for client in clients.values():
            await client.aclose()
    embedder = values.get("embedder", "local (static-e5-multilingual-256, in-process)")
    contextual = values.get("contextual_embedder", "minilm (in-process, background)")
    result.update(
        system="hindsight-redis",
        config=args.config,
        conversations=len(convs),
        embedder=embedder,
        contextual=contextual,
        workers=args.workers,
        search="hybrid (default)",
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--config", choices=["default", "equal"], default="default")
    parser.add_argument("--embed-url", help="OpenAI-compatible base URL (config equal)")
    parser.add_argument("--model", default="static-e5-multilingual-256")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--log-dir", default="/tmp")
    args = parser.parse_args()
    if args.config == "equal" and not args.embed_url:
        parser.error("--config equal needs --embed-url")
    started = time.perf_counter()
    result = asyncio.run(run(args))
    result["wall_s"] = time.perf_counter() - started
    emit(result)


if __name__ == "__main__":
    main()
