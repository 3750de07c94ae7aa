"""Bearer tokens against a provider that misbehaves: a real HTTP server in
the test process publishing a discovery document whose keys page is not
JSON (a proxy's maintenance page, say): a 503 saying so, never a 500."""

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from rest_framework.test import APIClient

from kmqadmin.console.oidc import provider

pytestmark = pytest.mark.django_db


class MaintenancePage(BaseHTTPRequestHandler):
    """Discovery as it should be; the keys page an HTML page, status 200."""

    def do_GET(self) -> None:
        issuer = f"http://127.0.0.1:{self.server.server_port}"
        if self.path == "/.well-known/openid-configuration":
            body = json.dumps(
                {
                    "issuer": issuer,
                    "authorization_endpoint": f"{issuer}/auth",
                    "token_endpoint": f"{issuer}/token",
                    "userinfo_endpoint": f"{issuer}/userinfo",
                    "jwks_uri": f"{issuer}/keys",
                }
            ).encode()
            kind = "application/json"
        else:
            body, kind = b"<html><body>Back soon</body></html>", "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def issuer(settings) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), MaintenancePage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    settings.KMQ_OIDC_ISSUER = url
    settings.KMQ_OIDC_CLIENT_ID = settings.KMQ_OIDC_AUDIENCE = "kmqadmin"
    settings.KMQ_OIDC_CLIENT_SECRET = "secret"
    provider.forget()
    yield url
    provider.forget()
    server.shutdown()


def test_a_keys_page_that_is_not_json_is_a_503(issuer: str) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    claims = {"iss": issuer, "aud": "kmqadmin", "sub": "s", "iat": now, "exp": now + 60}
    token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    answer = APIClient().get("/api/v1/queues/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 503, answer.content
    assert "keys cannot be read" in answer.json()["detail"]
