"""A background job's progress bar, polled by htmx until the job ends."""

from celery.result import AsyncResult
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..decorators import viewer


def started(request: HttpRequest, job: AsyncResult) -> HttpResponse:
    """The bar of a job just queued; it polls progress() until the job ends."""
    return render(request, "console/_progress.html", {"task_id": job.id, "state": "PENDING"})


@viewer
def progress(request: HttpRequest, task_id: str) -> HttpResponse:
    job = AsyncResult(task_id)
    info = job.info if isinstance(job.info, dict) else {}
    context = {
        "task_id": task_id,
        "state": job.state,
        "info": info,
        "percent": round(100 * info.get("fraction", 1.0 if job.successful() else 0.0)),
        "error": str(job.info) if job.failed() else None,
    }
    return render(request, "console/_progress.html", context)
