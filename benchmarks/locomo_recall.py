"""LoCoMo retrieval recall@k of vector, keyword and hybrid search.

Every dialogue turn of the 5 dev conversations becomes one memory (content
"speaker: text", source = its dia_id, session_id = the conversation id, in
one namespace); each question of categories 1-4 is searched with the
``session_id`` filter of its conversation, and recall@k is the share of the
cited turns (``evidence``) found in the top k, averaged over questions.

Run:  python benchmarks/locomo_recall.py [--embedder local] [--alpha 0.7]
      [--depth 50] [--redis-url URL]   (no URL: a throwaway embedded Redis)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from hindsight_redis import search as search_module
from hindsight_redis.codec import doc_from_candidate
from hindsight_redis.index import IndexInfo, MemoryIndex
from hindsight_redis.keys import Keys
from hindsight_redis.models import MemoryEvent, SearchFilters
from hindsight_redis.pipeline.base import Candidate
from hindsight_redis.providers.embedders import Embedder, make_embedder
from hindsight_redis.search import search_memories
from hindsight_redis.settings import Settings

DATA = Path("/work/shared/data/locomo/locomo_dev.json")
CATEGORIES = {1, 2, 3, 4}


def load_turns(data: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(conversation id, dia_id, content) of every turn."""
    turns = []
    for conv in data:
        talk = conv["conversation"]
        for key, value in talk.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
                for turn in value:
                    content = f"{turn['speaker']}: {turn['text']}"
                    turns.append((conv["sample_id"], turn["dia_id"], content))
    return turns


def evidence_ids(raw: list[str]) -> set[str]:
    """Cited dia_ids, tolerant of the dataset's odd separators."""
    return {p for item in raw for p in re.split(r"[;,\s]+", item) if p}


async def ingest(
    redis: Redis, keys: Keys, info: IndexInfo, embedder: Embedder, turns: list[tuple[str, str, str]]
) -> None:
    """Embed the turns in batches and HSET them as memory documents."""
    now = time.time()
    for start in range(0, len(turns), 256):
        chunk = turns[start : start + 256]
        vectors = await embedder.embed([c for _, _, c in chunk])
        async with redis.pipeline(transaction=False) as pipe:
            for (conv, dia, content), vec in zip(chunk, vectors, strict=True):
                memory_id = f"{conv}-{dia}"
                event = MemoryEvent(
                    event_id=memory_id, namespace=keys.namespace, content=content,
                    session_id=conv, source=dia, created_at=now,
                )  # fmt: skip
                cand = Candidate("0-0", event, content, embedding=vec)
                doc = doc_from_candidate(
                    cand, memory_id=memory_id, vector_field=info.vector_field,
                    embedding_model=embedder.model_id, now=now,
                )  # fmt: skip
                pipe.hset(keys.doc(memory_id), mapping=doc)  # type: ignore[arg-type]
            await pipe.execute()


async def wait_docs(redis: Redis, name: str, count: int) -> None:
    """Wait until the index holds ``count`` documents."""
    while True:
        info = await redis.ft(name).info()
        if int(info["num_docs"]) >= count and float(info.get("percent_indexed", 1)) >= 1:
            return
        await asyncio.sleep(0.05)


async def run(args: argparse.Namespace, url: str) -> dict[str, dict[str, float]]:
    """Ingest, ask every question in every mode; recall per mode."""
    data = json.loads(DATA.read_text())
    settings = Settings(
        redis_url=url, key_prefix=f"bench{uuid.uuid4().hex[:6]}", namespace="locomo",
        hybrid_alpha=args.alpha, hnsw_ef_runtime=args.ef,
    )  # fmt: skip
    keys = Keys(settings.key_prefix, settings.namespace)
    try:
        embedder = make_embedder(args.embedder)
        embedder.embed_sync(["probe"])
    except Exception as e:  # the local model may not be installed yet
        print(f"embedder {args.embedder!r} unavailable ({e}); using 'hash'", file=sys.stderr)
        embedder = make_embedder("hash")
    search_module.SCORER = args.scorer
    redis = Redis.from_url(url)
    try:
        info = await MemoryIndex(redis, keys, settings).ensure(embedder)
        turns = load_turns(data)
        await ingest(redis, keys, info, embedder, turns)
        await wait_docs(redis, info.name, len(turns))
        modes = {
            "vector": ("vector", "linear"),
            "keyword": ("keyword", "linear"),
            f"hybrid linear a={args.alpha}": ("hybrid", "linear"),
            "hybrid rrf": ("hybrid", "rrf"),
        }
        sums = {m: [0.0, 0.0] for m in modes}
        asked = 0
        for conv in data:
            for qa in conv["qa"]:
                if qa.get("category") not in CATEGORIES or not qa.get("evidence"):
                    continue
                wanted = evidence_ids(qa["evidence"])
                asked += 1
                for label, (mode, fusion) in modes.items():
                    hits = await search_memories(
                        redis, keys, settings, embedder, info, qa["question"],
                        top_k=10, mode=mode, fusion=fusion,  # type: ignore[arg-type]
                        filters=SearchFilters(session_id=conv["sample_id"]),
                        candidates=args.depth, record_access=False,
                    )  # fmt: skip
                    sources = [h.source for h in hits]
                    sums[label][0] += len(wanted & set(sources[:5])) / len(wanted)
                    sums[label][1] += len(wanted & set(sources[:10])) / len(wanted)
        print(f"embedder {embedder.model_id}, {len(turns)} turns, {asked} questions")
        return {m: {"r5": s[0] / asked, "r10": s[1] / asked} for m, s in sums.items()}
    finally:
        await redis.aclose()


def main() -> None:
    """Parse arguments, start a server when none is given, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--alpha", type=float, default=0.7)
    parser.add_argument("--depth", type=int, default=50, help="candidates per leg")
    parser.add_argument("--ef", type=int, default=64, help="HNSW EF_RUNTIME")
    parser.add_argument("--scorer", default="BM25STD", choices=["BM25STD", "BM25", "TFIDF"])
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()
    if args.redis_url:
        results = asyncio.run(run(args, args.redis_url))
    else:
        from hindsight_redis.server import EmbeddedServer, get_profile

        with tempfile.TemporaryDirectory() as tmp:
            server = EmbeddedServer(Path(tmp), get_profile("ephemeral"), port=0)
            state = server.start()
            try:
                results = asyncio.run(run(args, state.url))
            finally:
                server.stop()
    print("\n| mode | recall@5 | recall@10 |\n| --- | --- | --- |")
    for mode, r in results.items():
        print(f"| {mode} | {r['r5']:.3f} | {r['r10']:.3f} |")


if __name__ == "__main__":
    main()
