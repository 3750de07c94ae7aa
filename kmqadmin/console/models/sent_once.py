"""A send made with an Idempotency-Key, kept so a retry is not a second send."""

from django.conf import settings
from django.db import models

from kmqadmin.console.models.audit import AuditEntry
from kmqadmin.console.models.queues import Queue


class SentOnce(models.Model):
    """A send made with an Idempotency-Key (services/queues/sent_once.py): a retry
    with the same key gets this send's outcome instead of writing again.
    ``entry`` is its audit entry, which holds the outcome."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    entry = models.ForeignKey(AuditEntry, null=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "queue", "key"], name="one_send_per_key")
        ]

    def __str__(self) -> str:
        return f"{self.key} on {self.queue_id}"
