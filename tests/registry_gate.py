"""A gate in front of the test registry that asks for HTTP Basic credentials.

Apicurio 2.1 checks credentials only through an OIDC server these machines
cannot run; a registry behind a proxy that asks for a login is what many
sites run instead. The gate answers 401 without the right Authorization
header and forwards everything else, as it came, to the registry.
"""

import base64
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from kmqadmin.kafka.embedded.broker import free_port


class RegistryGate:
    def __init__(self, upstream: str, username: str, password: str) -> None:
        """``upstream``: the registry's origin (scheme, host and port)."""
        self.port = free_port("127.0.0.1")
        self.refused = 0
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        self._server = ThreadingHTTPServer(
            ("127.0.0.1", self.port), _handler(self, upstream, token)
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "RegistryGate":
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(gate: RegistryGate, upstream: str, token: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != f"Basic {token}":
                gate.refused += 1
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="registry"')
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error_code": 401, "message": "Unauthorized"}')
                return
            try:
                with urllib.request.urlopen(upstream + self.path, timeout=10) as answer:
                    status, body, kind = answer.status, answer.read(), answer.headers
            except urllib.error.HTTPError as exc:
                status, body, kind = exc.code, exc.read(), exc.headers
            self.send_response(status)
            self.send_header("Content-Type", kind.get("Content-Type", "application/json"))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            """Quiet: the test says what it needs."""

    return Handler
