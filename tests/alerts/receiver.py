"""A webhook receiver in the test process: a real HTTP server on a free
loopback port that keeps every POST and answers the statuses it is given,
one per request (200 once they run out)."""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)


@contextmanager
def receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    kept = Receiver("", list(statuses or []))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            kept.received.append(Received(body, dict(self.headers.items())))
            self.send_response(kept.statuses.pop(0) if kept.statuses else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kept.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield kept
    finally:
        server.shutdown()
        server.server_close()
