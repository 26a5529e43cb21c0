"""One local OpenAI-compatible embeddings endpoint for every system of the peer benchmark.

``POST /v1/embeddings`` (``input``: a string or a list of strings;
``encoding_format``: ``float`` or ``base64``), ``GET /v1/models``, and
``GET /stats`` (requests and texts embedded so far, per model; ``POST
/stats/reset`` zeroes them). Models, by the name a client sends (a litellm
``openai/`` prefix is already stripped by then):

- ``static-e5-multilingual-256``: the project's default write-path embedder
  (``LocalEmbedder``, numpy only), 256 dims;
- ``all-MiniLM-L6-v2``: the project's contextual model (MiniLM int8 ONNX), 384 dims.

Both ship with the project (no hub download). Like
``tests/integration/embedding_server.py`` but serving real models. Run with
the project's venv:  python benchmarks/peers/embed_server.py --port 8765
"""

from __future__ import annotations

import argparse
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from hindsight_redis.providers.contextual import MiniLMEmbedder
from hindsight_redis.providers.embedders import LocalEmbedder

STATIC = "static-e5-multilingual-256"
MINILM = "all-MiniLM-L6-v2"
MODELS = {STATIC: 256, MINILM: 384}


class Models:
    """Loads each model once; one lock per model (the embedders are not re-entrant)."""

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._loaded: dict[str, Any] = {}
        self._locks = {name: threading.Lock() for name in MODELS}
        self.counts: dict[str, dict[str, int]] = {}
        self._count_lock = threading.Lock()

    def _get(self, name: str) -> Any:
        if name not in self._loaded:
            if name == STATIC:
                self._loaded[name] = LocalEmbedder()
            else:
                self._loaded[name] = MiniLMEmbedder(threads=self._threads)
        return self._loaded[name]

    def embed(self, name: str, texts: list[str]) -> np.ndarray:
        with self._locks[name]:
            vectors = self._get(name).embed_sync(texts)
        with self._count_lock:
            seen = self.counts.setdefault(name, {"requests": 0, "texts": 0})
            seen["requests"] += 1
            seen["texts"] += len(texts)
        return np.asarray(vectors, dtype=np.float32)


class _Handler(BaseHTTPRequestHandler):
    server: EmbedServer
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse their connection
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length", 0))
        body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
        return body

    def do_GET(self) -> None:
        path = self.path.rstrip("/")
        if path.endswith("/models"):
            data = [{"id": name, "object": "model", "owned_by": "local"} for name in MODELS]
            self._reply(200, {"object": "list", "data": data})
        elif path == "/stats":
            self._reply(200, self.server.models.counts)
        else:
            self._reply(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        path = self.path.rstrip("/")
        body = self._body()  # always read: the connection is kept alive
        if path == "/stats/reset":
            self.server.models.counts.clear()
            self._reply(200, {})
            return
        if not path.endswith("/embeddings"):
            self._reply(404, {"error": {"message": f"no route {self.path}"}})
            return
        name = str(body.get("model", STATIC)).removeprefix("openai/")
        if name not in MODELS:
            self._reply(404, {"error": {"message": f"model {name!r} not served: {list(MODELS)}"}})
            return
        raw = body.get("input", [])
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
        if not texts or any(not t for t in texts):
            self._reply(400, {"error": {"message": "input must be non-empty strings"}})
            return
        vectors = self.server.models.embed(name, texts)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (
                    base64.b64encode(v.astype("<f4").tobytes()).decode()
                    if as_base64
                    else v.tolist()
                ),
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(len(t.split()) for t in texts)
        self._reply(
            200,
            {
                "object": "list",
                "model": name,
                "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class EmbedServer(ThreadingHTTPServer):
    """The endpoint; ``url`` is the ``api_base`` / ``base_url`` for clients."""

    daemon_threads = True

    def __init__(self, port: int = 0, threads: int = 1) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.models = Models(threads)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (MiniLM)")
    parser.add_argument("--preload", default=STATIC, help="comma-separated models to load first")
    args = parser.parse_args()
    server = EmbedServer(args.port, args.threads)
    for name in filter(None, args.preload.split(",")):
        server.models.embed(name, ["warm up"])
    server.models.counts.clear()
    print(json.dumps({"url": server.url, "models": MODELS}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
