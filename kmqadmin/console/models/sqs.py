"""What the SQS endpoint keeps in SQL: its access keys, its queues'
attributes beyond the registration, its message move tasks."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from kmqadmin.console.models.queues import Queue
from kmqadmin.kmq import names


class SqsAccessKey(models.Model):
    """An access key of the SQS endpoint, a user's: requests signed with it
    act with the user's roles. SigV4 signs with the secret itself, so it is
    kept to verify signatures: encrypted (services/sqs_keys.py), shown once."""

    key_id = models.CharField(max_length=20, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sqs_keys"
    )
    secret = models.BinaryField()  # a Fernet token
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.key_id


class SqsQueue(models.Model):
    """What the SQS endpoint keeps of a queue beyond its registration: the
    SQS attributes with no Kafka counterpart, its tags, and whether SQS made
    it (only then does DeleteQueue delete its topics too). A queue
    registered in the console gets one, with SQS's defaults, when SQS first
    names it."""

    queue = models.OneToOneField(Queue, on_delete=models.CASCADE, related_name="sqs")
    created_by_sqs = models.BooleanField(default=False)
    delay_seconds = models.PositiveIntegerField(default=0)
    maximum_message_size = models.PositiveIntegerField(default=1_048_576)
    message_retention_period = models.PositiveIntegerField(default=345_600)
    receive_message_wait_time_seconds = models.PositiveSmallIntegerField(default=0)
    tags = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return str(self.queue)


class SqsMoveTask(models.Model):
    """A message move task of the SQS endpoint (StartMessageMoveTask): the
    messages of a queue that is another's dead-letter queue moved back to
    the queues they came from, or to one destination, by a worker's job
    (sqs/moving.py). Kept after it ends: ListMessageMoveTasks shows the
    last ten of a queue."""

    RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED = (
        "RUNNING",
        "COMPLETED",
        "CANCELLING",
        "CANCELLED",
        "FAILED",
    )
    ACTIVE = (RUNNING, CANCELLING)

    handle = models.CharField(max_length=64, unique=True)
    source = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="+")
    # Empty: each message back to the queue it was dead-lettered from.
    destination = models.CharField(max_length=names.MAX_TOPIC_LENGTH, blank=True)
    max_per_second = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, default=RUNNING)
    to_move = models.PositiveIntegerField(default=0)
    moved = models.PositiveIntegerField(default=0)
    failure_reason = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    # Written by its job at least every few seconds: a task whose job died
    # (its worker killed) is told from one still running by this.
    beat_at = models.DateTimeField(default=timezone.now)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return self.handle
