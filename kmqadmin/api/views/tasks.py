"""The REST API for background jobs: where one stands."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.api.serializers.tasks import TaskStatusSerializer
from kmqadmin.console.services.jobs import job_status


class TaskStatus(APIView):
    @extend_schema(responses=TaskStatusSerializer)
    def get(self, request: Request, task_id: str) -> Response:
        """A job's state and progress (the final counts once it succeeded); its
        starter's and the admins' to see."""
        job = job_status(task_id, request.user)
        progress = {"error": job.error} if job.error is not None else job.progress or None
        return Response(TaskStatusSerializer({"state": job.state, "progress": progress}).data)
