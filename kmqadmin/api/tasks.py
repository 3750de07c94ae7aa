"""The REST API for background jobs: where one stands."""

from celery.result import AsyncResult
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from . import serializers as s


class TaskStatus(APIView):
    @extend_schema(responses=s.TaskStatusSerializer)
    def get(self, request: Request, task_id: str) -> Response:
        """A job's state and progress (the final counts once it succeeded)."""
        job = AsyncResult(task_id)
        info = job.info if isinstance(job.info, dict) else None
        if job.failed():
            info = {"error": str(job.info)}
        return Response(s.TaskStatusSerializer({"state": job.state, "progress": info}).data)
