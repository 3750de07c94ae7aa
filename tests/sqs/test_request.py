"""Queue URLs point back where the client reached us: its Host header as
sent, and https behind a TLS proxy only when told to trust the proxy."""

from kmqadmin.sqs.request import base_url


def scope(*headers: tuple[bytes, bytes]) -> dict:
    return {"scheme": "http", "server": ("10.0.0.5", 8000), "headers": list(headers)}


def test_the_host_the_client_used_and_its_scheme(settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = None
    assert base_url(scope((b"host", b"queues.example:8443"))) == "http://queues.example:8443/sqs"
    assert base_url(scope()) == "http://10.0.0.5:8000/sqs"
    # Not told to trust a proxy: a client cannot make our URLs https.
    assert base_url(scope((b"x-forwarded-proto", b"https"))).startswith("http://")


def test_behind_a_trusted_tls_proxy_the_urls_are_https(settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    proxied = scope((b"host", b"queues.example"), (b"X-Forwarded-Proto", b"https"))
    assert base_url(proxied) == "https://queues.example/sqs"
    assert base_url(scope((b"host", b"queues.example"))) == "http://queues.example/sqs"
