"""agent-memory-server 0.14.0 on the peer protocol (run with benchmarks/peers/.venv-ams).

Starts the REST API (``agent-memory api --task-backend docket``) and one
Docket task worker (``agent-memory task-worker``) against the given Redis,
both with the shared embeddings endpoint as their OpenAI-compatible
embedder (``EMBEDDING_MODEL=openai/<model>``, ``OPENAI_API_BASE``) and every
LLM feature off: no topic or entity extraction, no discrete-memory
extraction, no semantic compaction (each needs an LLM; none is reachable
here). Memories are written directly as long-term memories through the
official client (``agent-memory-client``): one ``create_long_term_memory``
call per turn, ``deduplicate=False`` (its semantic dedup merges through an
LLM), namespace = the conversation. The server acknowledges before indexing
(a Docket task embeds and loads the memory), so writes/s is acceptance;
searchable = the RedisVL index ``memory_records`` holds every memory.
Search: ``search_long_term_memory(question, namespace=..., limit=10)`` with
the server's defaults (KNN over the one vector, recency re-rank on).

Run:  benchmarks/peers/.venv-ams/bin/python benchmarks/peers/ams_adapter.py \
        --redis-url URL --embed-url URL [--conversations N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocol import Conversation, Turn, ask_all, emit, load, log, spawn, wait_until, write_all

BIN = Path(sys.executable).parent
INDEX = "memory_records"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        REDIS_URL=args.redis_url,
        EMBEDDING_MODEL=f"openai/{args.model}",
        OPENAI_API_BASE=args.embed_url,
        OPENAI_API_KEY="local-no-key",
        REDISVL_VECTOR_DIMENSIONS=str(args.dims),
        ENABLE_TOPIC_EXTRACTION="false",
        ENABLE_NER="false",
        ENABLE_DISCRETE_MEMORY_EXTRACTION="false",
        COMPACT_SEMANTIC_DUPLICATES="false",
        FORGETTING_ENABLED="false",
        DISABLE_AUTH="true",
        AUTH_MODE="disabled",
        LOG_LEVEL="WARNING",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    return env


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx
    from agent_memory_client import MemoryAPIClient, MemoryClientConfig
    from agent_memory_client.filters import Namespace
    from agent_memory_client.models import ClientMemoryRecord
    from redis.asyncio import Redis

    convs = load(limit=args.conversations)
    port = free_port()
    env = server_env(args)
    workdir = tempfile.mkdtemp(prefix="ams-")  # no stray .env is read
    agent_memory = str(BIN / "agent-memory")
    api = spawn(
        [
            agent_memory,
            "api",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--task-backend",
            "docket",
        ],
        f"{args.log_dir}/ams-api.log",
        env=env,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
    )
    worker = spawn(
        [agent_memory, "task-worker", "--concurrency", str(args.concurrency)],
        f"{args.log_dir}/ams-worker.log",
        env=env,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
    )
    redis = Redis.from_url(args.redis_url)
    base = f"http://127.0.0.1:{port}"
    client = MemoryAPIClient(MemoryClientConfig(base_url=base, timeout=60))
    try:

        async def up() -> bool:
            if api.poll() is not None or worker.poll() is not None:
                raise RuntimeError("agent-memory exited; see the logs in " + args.log_dir)
            try:
                async with httpx.AsyncClient() as http:
                    ok = (await http.get(f"{base}/v1/health")).status_code == 200
            except httpx.HTTPError:
                return False
            return ok and await redis.zcard("memory-server:workers") > 0

        log(f"ams: api and worker up after {await wait_until(up, 120, 0.2):.1f} s")
        ids: dict[str, str] = {}  # memory id -> dia_id

        async def write(conv: Conversation, turn: Turn) -> None:
            memory_id = f"{conv.id}-{turn.dia_id}".replace(":", "_")
            ids[memory_id] = turn.dia_id
            record = ClientMemoryRecord(id=memory_id, text=turn.content, namespace=conv.id)
            await client.create_long_term_memory([record], deduplicate=False)

        result: dict[str, Any] = await write_all(convs, write)
        expected = result["turns_written"]

        async def indexed() -> bool:
            try:
                info = await redis.ft(INDEX).info()
            except Exception:  # the worker creates the index with the first memory
                return False
            return int(info["num_docs"]) >= expected

        result["searchable_after_s"] = await wait_until(indexed, every_s=0.01)
        result["indexed"] = int((await redis.ft(INDEX).info())["num_docs"])
        log(f"ams: {result}")

        async def search(conv: Conversation, question: str) -> list[str]:
            found = await client.search_long_term_memory(
                text=question, namespace=Namespace(eq=conv.id), limit=10
            )
            return [ids.get(m.id, m.id) for m in found.memories]

        result.update(await ask_all(convs, search))
    finally:
        await client.close()
        await redis.aclose()
        for proc in (api, worker):
            proc.send_signal(signal.SIGTERM)
        for proc in (api, worker):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    result.update(
        system="agent-memory-server 0.14.0",
        config="embedder held equal",
        conversations=len(convs),
        embedder=f"openai/{args.model} via the shared endpoint (litellm)",
        contextual="none",
        workers=f"1 API + 1 Docket task worker (concurrency {args.concurrency})",
        search="vector KNN (RedisVL), recency re-rank",
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--embed-url", required=True)
    parser.add_argument("--model", default="static-e5-multilingual-256")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--log-dir", default="/tmp")
    args = parser.parse_args()
    started = time.perf_counter()
    result = asyncio.run(run(args))
    result["wall_s"] = time.perf_counter() - started
    emit(result)


if __name__ == "__main__":
    main()
