"""A tiny OpenAI-compatible embedding server for tests: ``POST /v1/embeddings``.

Deterministic vectors (the hash embedder's, ``DIMS`` wide), a model name no
model table knows, and a count of the requests and of the texts embedded.
Run as ``python tests/integration/embedding_server.py PORT`` or start
``EmbeddingServer`` in a thread.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hindsight_redis.providers.embedders import HashEmbedder

DIMS = 48
MODEL = "tiny-embed-v0"


class _Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/embeddings"):
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.server.record(texts)
        vectors = HashEmbedder(dims=DIMS).embed_sync([str(t) for t in texts])
        reply = {
            "object": "list",
            "model": body.get("model", MODEL),
            "data": [
                {"object": "embedding", "index": i, "embedding": v.tolist()}
                for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class EmbeddingServer(ThreadingHTTPServer):
    """The server; ``requests`` and ``texts`` count what it answered."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.requests = 0
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def record(self, texts: list[Any]) -> None:
        with self._lock:
            self.requests += 1
            self.texts += [str(t) for t in texts]

    @property
    def url(self) -> str:
        """The ``api_base`` to give an OpenAI client."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> EmbeddingServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self


if __name__ == "__main__":
    EmbeddingServer(int(sys.argv[1])).serve_forever()
