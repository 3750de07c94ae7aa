from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from .models import Queue


@login_required
def index(request: HttpRequest) -> HttpResponse:
    queues = Queue.objects.select_related("cluster")
    return render(request, "console/index.html", {"queues": queues})


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and compose: the process serves requests."""
    return JsonResponse({"status": "ok"})
