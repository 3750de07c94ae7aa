"""``/metrics``: the web process's metrics in Prometheus' text format.

Who may scrape: a logged-in console user, a request carrying
``Authorization: Bearer <KMQ_METRICS_TOKEN>`` (when that is set), or, when
the web is not behind a proxy, a request from loopback (a Prometheus on the
same host; behind a proxy every request comes from the proxy's address, so
loopback proves nothing there). Anyone else gets a 401 or 403 that says
why: queue names and depths are not public.
"""

import hmac
import ipaddress
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from kmqadmin.console.metrics.queues import QueueGaugesCollector
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.metrics.exposition import registry

log = logging.getLogger(__name__)

_served = registry(QueueGaugesCollector())


@require_GET
def scrape(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        return _refused()
    try:
        body = generate_latest(_served)
    except Exception:  # a broken multiprocess file, say: the scrape fails, not the page
        log.exception("metrics could not be rendered")
        return HttpResponse("metrics unavailable; see the web log", status=503)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


def _allowed(request: HttpRequest) -> bool:
    token = settings.KMQ_METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    if role_of(request.user) >= Role.VIEWER:
        return True
    return settings.SECURE_PROXY_SSL_HEADER is None and _loopback(request.META.get("REMOTE_ADDR"))


def _loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _refused() -> HttpResponse:
    if settings.KMQ_METRICS_TOKEN:
        response = HttpResponse("a bearer token is needed (KMQ_METRICS_TOKEN)", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(
        "metrics are served to loopback, console users, or a bearer token (set KMQ_METRICS_TOKEN)",
        status=403,
        content_type="text/plain",
    )
