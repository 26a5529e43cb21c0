"""A tiny OpenAI-compatible chat server for tests: ``POST /v1/chat/completions``.

It answers the poisoning judge (a system prompt about poisoning) with the verdict
``verdicts`` gives for the entry's text (a default otherwise), and any other prompt with
``{}``: the callers of those fall back to their heuristics. ``asked`` lists the entries
the poisoning judge was asked about. Start ``ChatServer`` in a thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Verdict = Callable[[str], dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        answer: dict[str, Any] = {}
        if "poisoning" in system:
            entry = user.removeprefix("<entry>\n").removesuffix("\n</entry>")
            answer = self.server.answer(entry)
        reply = {
            "id": "chat-1",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "tiny-chat"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps(answer)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class ChatServer(ThreadingHTTPServer):
    """The server; ``verdict(entry)`` is the poisoning judge's answer to ``entry``."""

    def __init__(self, verdict: Verdict, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.verdict = verdict
        self.asked: list[str] = []
        self._lock = threading.Lock()

    def answer(self, entry: str) -> dict[str, Any]:
        """The verdict on ``entry`` (and note that it was asked)."""
        with self._lock:
            self.asked.append(entry)
        return self.verdict(entry)

    @property
    def url(self) -> str:
        """The ``api_base`` to give an OpenAI client."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> ChatServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self
