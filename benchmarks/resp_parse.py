"""What a search leg's reply costs to parse, in RESP2 and in RESP3.

The LoCoMo dev conversations are indexed as ``locomo_recall.py --direct``
does, the held-out questions are searched once to record the legs' commands
(static KNN, BM25, contextual KNN, as the searcher sends them), then each
command's raw reply is read off a plain socket in each protocol and parsed
by ``hiredis`` as redis-py feeds it (64 KB chunks), many times over.

Printed per protocol: mean reply bytes, microseconds to parse one reply,
and the ratio of RESP3 to RESP2. The package's connections speak RESP2
(``resp.RESP_PROTOCOL``) because of this figure.

Run:  python benchmarks/resp_parse.py [--questions 30] [--rounds 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import hiredis
import redis.asyncio.client as redis_client
from redis.asyncio import Redis
from redis.connection import Connection

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_recall import held_out_questions, ingest_direct, load_turns

from hindsight_redis.keys import Keys
from hindsight_redis.models import SearchFilters
from hindsight_redis.searcher import Searcher
from hindsight_redis.settings import Settings

from common import embedded_redis, locomo_path

_CHUNK = 65536  # redis-py's socket read size


async def leg_commands(url: str, questions: int) -> list[tuple[Any, ...]]:
    """Index the dev conversations; the FT.SEARCH commands of ``questions`` searches."""
    data = json.loads(locomo_path().read_text())
    settings = Settings(
        redis_url=url, key_prefix=f"resp{uuid.uuid4().hex[:6]}", namespace="locomo",
        profile="ephemeral", max_backlog=1_000_000,
    )  # fmt: skip
    await ingest_direct(settings, load_turns(data))
    commands: list[tuple[Any, ...]] = []
    execute_pipeline, execute_command = redis_client.Pipeline.execute, Redis.execute_command

    async def recorded_pipeline(self: Any, *args: Any, **kwargs: Any) -> Any:
        commands.extend(c[0] for c in self.command_stack if c[0][0] == "FT.SEARCH")
        return await execute_pipeline(self, *args, **kwargs)

    async def recorded_command(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args and args[0] == "FT.SEARCH":
            commands.append(args)
        return await execute_command(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    redis_client.Pipeline.execute = recorded_pipeline  # type: ignore[method-assign]
    Redis.execute_command = recorded_command  # type: ignore[method-assign]
    redis = Redis.from_url(url)
    try:
        searcher = await Searcher.open(redis, Keys(settings.key_prefix, "locomo"), settings)
        for question, conv in held_out_questions(data)[:questions]:
            await searcher.search(question, top_k=10, filters=SearchFilters(session_id=conv))
        await searcher.aclose()
    finally:
        redis_client.Pipeline.execute = execute_pipeline  # type: ignore[method-assign]
        Redis.execute_command = execute_command  # type: ignore[method-assign]
        await redis.aclose()
    return commands


def raw_reply(host: str, port: int, protocol: int, command: tuple[Any, ...]) -> bytes:
    """The bytes Redis sends back for ``command`` on a fresh connection in ``protocol``."""
    connection = Connection(protocol=protocol)  # type: ignore[no-untyped-call]
    packed = b"".join(connection.pack_command(*command))  # type: ignore[no-untyped-call]
    with socket.create_connection((host, port)) as sock:
        if protocol == 3:
            sock.sendall(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
            _read_one(sock, hiredis.Reader())
        sock.sendall(packed)
        return _read_one(sock, hiredis.Reader())


def _read_one(sock: socket.socket, reader: Any) -> bytes:
    raw = b""
    while True:
        data = sock.recv(1 << 20)
        if not data:
            raise ConnectionError("Redis closed the connection")
        raw += data
        reader.feed(data)
        if reader.gets() is not False:
            return raw


def parse_us(replies: list[bytes], rounds: int) -> float:
    """Microseconds per reply to parse ``replies`` as redis-py does (chunks, bytes kept)."""
    started = time.perf_counter()
    for _ in range(rounds):
        for raw in replies:
            reader = hiredis.Reader()
            for i in range(0, len(raw), _CHUNK):
                reader.feed(raw[i : i + _CHUNK])
                reader.gets(False)
    return (time.perf_counter() - started) / (rounds * len(replies)) * 1e6


def main() -> None:
    """Record the legs' commands, read their replies in both protocols, time the parsing."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    with embedded_redis() as url:
        commands = asyncio.run(leg_commands(url, args.questions))
        host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        print(f"{len(commands)} leg replies of {args.questions} searches\n")
        print("| protocol | reply bytes (mean) | parse us per reply |")
        print("|---|---:|---:|")
        times = {}
        for protocol in (2, 3):
            replies = [raw_reply(host, int(port), protocol, c) for c in commands]
            times[protocol] = parse_us(replies, args.rounds)
            mean = sum(map(len, replies)) / len(replies)
            print(f"| RESP{protocol} | {mean:,.0f} | {times[protocol]:.1f} |")
        print(f"\nRESP3 / RESP2: {times[3] / times[2]:.2f}x")


if __name__ == "__main__":
    main()
