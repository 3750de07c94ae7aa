"""The dashboard: every queue's gauges, pushed live by DashboardConsumer."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from kmqadmin.console import charts
from kmqadmin.console.decorators import viewer
from kmqadmin.console.models import Queue, ScheduleTopic


@viewer
def index(request: HttpRequest) -> HttpResponse:
    queues = Queue.objects.select_related("cluster")
    schedules = ScheduleTopic.objects.select_related("cluster")
    context = {
        "queues": queues,
        "schedules": schedules,
        "hours": charts.HOURS,
        "counts": charts.counts_chart(queues),
        "latency": charts.p95_by_queue(queues),
    }
    return render(request, "console/dashboard.html", context)
