"""The audit log: append-only, each entry's outcome set once."""

from django.conf import settings
from django.db import models

from kmqadmin.console.printable import printable, printable_json


class AppendOnly(Exception):
    """An audit entry may be added, and its outcome set once; nothing else."""


class AuditQuerySet(models.QuerySet):
    """Refuses bulk changes: no UI, API or admin action rewrites the log.

    (A deleted user's entries keep their username: Django nulls ``user``
    through the base manager, which this does not guard.)"""

    def update(self, **kwargs: object) -> int:
        raise AppendOnly("audit entries are not updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnly("audit entries are not deleted")


class AuditEntry(models.Model):
    """One action, by whom, on what, the target before and after it, and how
    it ended: written ``pending`` before the effect, ``done`` or ``failed``
    (with the error) once it is known. A pending entry whose process died
    says just that: the outcome is unknown. ``unknown``: Kafka did not say
    within the wait whether a write took; it may say later, and then the
    entry gets that outcome."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"
        UNKNOWN = "unknown"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who acted, as they were named then: kept when the user is deleted.
    username = models.CharField(max_length=150, blank=True, db_index=True)
    action = models.CharField(max_length=64, db_index=True)
    target = models.TextField()
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status, db_index=True)
    error = models.TextField(blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.username} {self.action} {self.target}"

    def save(self, *args: object, **kwargs: object) -> None:
        """Inserts only, with every text printable (see printable.py)."""
        if not self._state.adding:
            raise AppendOnly("audit entries are not changed; finish() sets the outcome")
        if self.user is not None and not self.username:
            self.username = self.user.get_username()
        self.target, self.error = printable(self.target), printable(self.error)
        self.before, self.after = printable_json(self.before), printable_json(self.after)
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise AppendOnly("audit entries are not deleted")

    def finish(self, status: Status, *, after: object = None, error: str = "") -> None:
        """The outcome of a pending entry, set once; an unknown one may be
        set once more, to what it turned out to be."""
        after, error = printable_json(after), printable(error)
        settable = [self.Status.PENDING]
        if status != self.Status.UNKNOWN:
            settable.append(self.Status.UNKNOWN)
        pending = type(self)._base_manager.filter(pk=self.pk, status__in=settable)
        if pending.update(status=status, after=after, error=error) != 1:
            raise AppendOnly(f"audit entry {self.pk} already has its outcome")
        self.status, self.after, self.error = status, after, error
