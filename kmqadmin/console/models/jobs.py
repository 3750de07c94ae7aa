"""Who started a background job."""

from django.conf import settings
from django.db import models


class Job(models.Model):
    """Who started a background job: its progress is theirs and the admins' to see."""

    task_id = models.CharField(max_length=255, unique=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.task_id
