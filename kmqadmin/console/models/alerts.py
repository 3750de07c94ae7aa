"""Alert rules on a queue or schedules topic, and the alerts they raised."""

from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models

from kmqadmin.console.models.queues import Queue
from kmqadmin.console.models.schedules import ScheduleTopic

# The bounds of a rule's numbers, and which conditions a target can have:
# the model's own checks, so the forms, the API and /admin/ say the same.
MAX_WINDOW_MINUTES = 1440
MAX_THRESHOLD = 2**31 - 1  # what every database holds in an integer column
# Conditions counted over the rule's window.
WINDOWED = {"dead_letters", "redeliveries", "lateness_p99"}
# Read from a queue's tracker or its in-flight view: a share queue has none.
TRACKER_ONLY = {"oldest_in_flight", "markers_lag", "idle_workers"}
# A schedules topic's: its scheduler group's lag and members, how late it fired.
SCHEDULES = {"group_lag", "idle_workers", "lateness_p99"}


def refused(target_kind: str, backend: str | None, condition: str) -> str | None:
    """Why a queue (of ``backend``) or a schedules topic cannot have
    ``condition``; None when it can."""
    if target_kind == "schedules":
        if condition not in SCHEDULES:
            return f"a schedules topic's rule is one of: {', '.join(sorted(SCHEDULES))}"
        return None
    if condition == "lateness_p99":
        return "lateness_p99 is a schedules topic's: its schedulers fire late"
    if backend == "share" and condition in TRACKER_ONLY:
        return f"{condition} reads a kmq tracker; a share queue has none"
    return None


class AlertRuleQuerySet(models.QuerySet):
    def with_targets(self) -> "AlertRuleQuerySet":
        """With the queue or schedules topic and its cluster, which every
        page, answer and check of a rule reads."""
        return self.select_related("queue__cluster", "schedules__cluster")


class AlertRule(models.Model):
    """A condition on one queue or schedules topic, checked every minute by
    beat (console/services/alerts/), and who is told when it starts and when it
    ends: a webhook (JSON signed with HMAC-SHA256, or Slack's body), emails,
    or both. ``firing`` is the state the last check left, so a condition
    that holds for an hour is told once, not sixty times."""

    class Condition(models.TextChoices):
        DEAD_LETTERS = "dead_letters", "dead letters arriving (count in the window)"
        OLDEST_IN_FLIGHT = "oldest_in_flight", "oldest in-flight delivery (seconds)"
        REDELIVERIES = "redeliveries", "redeliveries per minute"
        MARKERS_LAG = "markers_lag", "tracker markers lag (records)"
        GROUP_LAG = "group_lag", "group lag (a queue's: records not yet taken)"
        IDLE_WORKERS = "idle_workers", "workers owning no partitions"
        LATENESS_P99 = "lateness_p99", "scheduler fire lateness p99 (seconds)"

    queue = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.CASCADE, related_name="alert_rules"
    )
    schedules = models.ForeignKey(
        ScheduleTopic, null=True, blank=True, on_delete=models.CASCADE, related_name="alert_rules"
    )
    condition = models.CharField(max_length=24, choices=Condition)
    threshold = models.PositiveIntegerField(
        validators=[MaxValueValidator(MAX_THRESHOLD)],
        help_text="fires when the value is above this",
    )
    window_minutes = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_WINDOW_MINUTES)],
        help_text="dead letters, redeliveries and lateness: the minutes counted",
    )
    webhook_url = models.URLField(max_length=2000, blank=True)
    # Fernet-encrypted (secrets_at_rest.py): needed to sign, never shown again.
    webhook_secret = models.BinaryField(blank=True, default=b"")
    slack = models.BooleanField(default=False, help_text="send Slack's body: {'text': …}")
    emails = models.TextField(blank=True, help_text="one address per line")
    enabled = models.BooleanField(default=True)
    silenced_until = models.DateTimeField(null=True, blank=True)
    firing = models.BooleanField(default=False)
    value = models.FloatField(null=True, blank=True, help_text="at the last check")
    checked_at = models.DateTimeField(null=True, blank=True)
    # Why the last check could not measure; why the last notification failed.
    check_error = models.TextField(blank=True)
    delivery_error = models.TextField(blank=True)

    objects = AlertRuleQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(queue__isnull=False, schedules__isnull=True)
                | models.Q(queue__isnull=True, schedules__isnull=False),
                name="alert_rule_has_one_target",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_condition_display()} > {self.threshold} on {self.target}"

    @property
    def on(self) -> "Queue | ScheduleTopic":
        """What the rule watches: its queue or its schedules topic."""
        return self.queue if self.queue_id else self.schedules

    @property
    def target(self) -> str:
        return self.on.topic

    @property
    def target_kind(self) -> str:
        return "queue" if self.queue_id else "schedules"

    def clean(self) -> None:
        """A condition its target can have, a webhook over http(s)."""
        if self.queue_id or self.schedules_id:
            backend = self.queue.backend if self.queue_id else None
            problem = refused(self.target_kind, backend, self.condition)
            if problem:
                raise ValidationError({"condition": problem})
        try:
            if self.webhook_url:
                URLValidator(schemes=["http", "https"])(self.webhook_url)
        except ValidationError:
            raise ValidationError({"webhook_url": "expected an http(s) URL"}) from None

    def silenced(self, now: datetime) -> bool:
        return self.silenced_until is not None and self.silenced_until > now

    def recipients(self) -> list[str]:
        return [line.strip() for line in self.emails.splitlines() if line.strip()]


class AlertEvent(models.Model):
    """An alert starting or ending, and whether its rule's receivers were
    told: the alert history page and API read these."""

    class Kind(models.TextChoices):
        FIRING = "firing"
        RESOLVED = "resolved"

    class Told(models.TextChoices):
        PENDING = "pending", "being told"
        SENT = "sent"
        FAILED = "failed"
        SILENCED = "silenced"
        NOBODY = "nobody", "no receiver set"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(db_index=True)
    kind = models.CharField(max_length=8, choices=Kind)
    value = models.FloatField()
    threshold = models.PositiveIntegerField()
    told = models.CharField(max_length=8, choices=Told)
    # When the last telling began: a "pending" event older than a telling
    # can take was left by a worker that died, and is told again.
    told_at = models.DateTimeField(null=True, blank=True)
    # Which receivers have it: telling again after a failure skips them.
    webhook_sent = models.BooleanField(default=False)
    email_sent = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} {self.rule}"
