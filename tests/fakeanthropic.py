"""A local stand-in for the Anthropic Messages API (127.0.0.1), scripted per test."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tool_use(name: str, data: dict[str, Any], id: str = "t1", tokens: tuple[int, int] = (100, 20)):
    return {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": [{"type": "tool_use", "id": id, "name": name, "input": data}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
    }


class FakeAnthropic:
    """`enqueue(reply or (status, body))`; `requests` holds every request body received."""

    def __init__(self) -> None:
        self.replies: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                fake.requests.append(json.loads(self.rfile.read(length)))
                fake.headers.append(dict(self.headers))
                reply = fake.replies.pop(0) if fake.replies else (500, {"type": "error"})
                status, body = reply if isinstance(reply, tuple) else (200, reply)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def enqueue(self, *replies: Any) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> FakeAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
