"""An SQS request as it reached the web process, before anything reads it.

The endpoint sits in front of Django (endpoint.py), so it sees the raw ASGI
request: the path and query still percent-encoded and every header as sent,
which is what the client signed (signature.py). A request is the endpoint's
when its path is under ``/sqs``, or, at ``/``, when it names an SQS action
in ``X-Amz-Target``: kombu (Celery's SQS transport) posts there whatever
URL it is given.
"""

from typing import Any

from .signature import SignedRequest

PREFIX = "/sqs"
JSON_TARGET = "AmazonSQS."


def is_sqs(scope: dict[str, Any]) -> bool:
    path = scope.get("path", "")
    if path == PREFIX or path.startswith(PREFIX + "/"):
        return True
    return path == "/" and (_header(scope, b"x-amz-target") or "").startswith(JSON_TARGET)


def incoming(scope: dict[str, Any], body: bytes) -> SignedRequest:
    raw_path = scope.get("raw_path") or scope["path"].encode()
    return SignedRequest(
        method=scope["method"],
        path=raw_path.decode("latin-1"),
        query=scope.get("query_string", b"").decode("latin-1"),
        headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]],
        body=body,
    )


def base_url(scope: dict[str, Any]) -> str:
    """Where the client reached us (queue URLs point back there: some SDKs
    send to the queue URL's host)."""
    host = _header(scope, b"host") or "{}:{}".format(*scope.get("server", ("localhost", 80)))
    return f"{scope.get('scheme', 'http')}://{host}{PREFIX}"


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None
