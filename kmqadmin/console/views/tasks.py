"""A background job's progress bar, polled by htmx until the job ends."""

from celery.result import AsyncResult
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from kmqadmin.console.decorators import viewer
from kmqadmin.console.services.jobs import job_status
from kmqadmin.console.services.missing import Missing


def started(request: HttpRequest, job: AsyncResult) -> HttpResponse:
    """The bar of a job just queued; it polls progress() until the job ends."""
    return render(request, "console/_progress.html", {"task_id": job.id, "state": "PENDING"})


@viewer
def progress(request: HttpRequest, task_id: str) -> HttpResponse:
    try:
        job = job_status(task_id, request.user)
    except Missing as exc:
        raise Http404(str(exc)) from None
    context = {
        "task_id": task_id,
        "state": job.state,
        "info": job.progress,
        "percent": job.percent,
        "error": job.error,
    }
    return render(request, "console/_progress.html", context)
