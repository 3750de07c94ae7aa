"""An SQS request as it reached the web process, before anything reads it.

The endpoint sits in front of Django (endpoint.py), so it sees the raw ASGI
request: the path and query still percent-encoded and every header as sent,
which is what the client signed (signature.py). A request is the endpoint's
when its path is under ``/sqs``, or, at ``/``, when it names an SQS action
in ``X-Amz-Target`` or is signed for the ``sqs`` service: kombu (Celery's
SQS transport) posts there whatever URL it is given.
"""

from typing import Any

from django.conf import settings

from kmqadmin.sqs.auth.signature import SignedRequest

PREFIX = "/sqs"
JSON_TARGET = "AmazonSQS."
SQS_SCOPE = "/sqs/aws4_request"  # in a SigV4 credential
QUERY_SQS_SCOPE = "%2Fsqs%2Faws4_request"  # the same, percent-encoded in a URL


def is_sqs(scope: dict[str, Any]) -> bool:
    path = scope.get("path", "")
    if path == PREFIX or path.startswith(PREFIX + "/"):
        return True
    if path != "/":
        return False
    if (_header(scope, b"x-amz-target") or "").startswith(JSON_TARGET):
        return True
    # The query protocol at "/": signed for the sqs service (header or presigned).
    signed = (_header(scope, b"authorization") or "") + scope.get("query_string", b"").decode(
        "latin-1"
    )
    return SQS_SCOPE in signed or QUERY_SQS_SCOPE in signed


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
    send to the queue URL's host). Behind a TLS proxy the scheme is the
    proxy's, trusted as Django trusts it (DJANGO_BEHIND_TLS_PROXY)."""
    host = _header(scope, b"host") or "{}:{}".format(*scope.get("server", ("localhost", 80)))
    return f"{_scheme(scope)}://{host}{PREFIX}"


def _scheme(scope: dict[str, Any]) -> str:
    if settings.SECURE_PROXY_SSL_HEADER:
        meta, secure = settings.SECURE_PROXY_SSL_HEADER
        header = meta.removeprefix("HTTP_").replace("_", "-").lower().encode()
        if (_header(scope, header) or "").split(",")[0].strip() == secure:
            return "https"
    return scope.get("scheme", "http")


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None
