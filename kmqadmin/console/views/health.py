"""Liveness for load balancers and compose."""

from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    """The process serves requests; Kafka's health is `kmq doctor`'s business."""
    return JsonResponse({"status": "ok"})
