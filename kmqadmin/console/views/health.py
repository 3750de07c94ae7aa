"""Liveness and readiness, for load balancers, orchestrators and people."""

from django.http import HttpRequest, JsonResponse

from kmqadmin.console.services.clusters import readiness
from kmqadmin.console.services.clusters.availability import RETRY_AFTER_S


def healthz(request: HttpRequest) -> JsonResponse:
    """The process serves requests: liveness only. A broker away must not get
    a healthy web process restarted; that is readyz's to say."""
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """200 when the database and every Kafka cluster answer, else 503 with
    Retry-After; within readiness.READY_WITHIN_S. Which part is away is for
    anyone (a probe reads the status); the details (addresses, errors) only
    for a signed-in user."""
    found = readiness.probes()
    ready = all(probe.ok for probe in found)
    signed_in = request.user.is_authenticated
    response = JsonResponse(
        {
            "status": "ready" if ready else "unready",
            "checks": {
                probe.name: {"ok": probe.ok} | ({"detail": probe.detail} if signed_in else {})
                for probe in found
            },
        },
        status=200 if ready else 503,
    )
    if not ready:
        response["Retry-After"] = str(RETRY_AFTER_S)
    return response
