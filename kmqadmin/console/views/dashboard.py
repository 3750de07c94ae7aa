"""The dashboard: every queue's gauges, pushed live by DashboardConsumer."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..decorators import viewer
from ..models import Queue, ScheduleTopic


@viewer
def index(request: HttpRequest) -> HttpResponse:
    queues = Queue.objects.select_related("cluster")
    schedules = ScheduleTopic.objects.select_related("cluster")
    return render(request, "console/dashboard.html", {"queues": queues, "schedules": schedules})
