"""Per-minute counts the workers and the analytics pipeline write, which
the dashboard, the charts and the alerts read without reading any topic."""

from django.db import models

from kmqadmin.console.models.queues import Queue
from kmqadmin.console.models.schedules import ScheduleTopic


class QueueMinute(models.Model):
    """Acks, redeliveries and dead letters of a queue in one minute, as its
    trackers counted them: the workers add their counts every few seconds,
    so the dashboard shows rates and sparklines without reading any topic."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="minutes")
    minute = models.DateTimeField()
    acked = models.PositiveIntegerField(default=0)
    redelivered = models.PositiveIntegerField(default=0)
    dead_lettered = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["queue", "-minute"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "minute"], name="unique_queue_minute")
        ]

    def __str__(self) -> str:
        return f"{self.queue} {self.minute:%Y-%m-%d %H:%M}"


class ScheduleMinute(models.Model):
    """How late a schedules topic's schedulers fired in one minute: fires
    per bucket of scheduler/lateness.py's BOUNDS_S, keyed by its bound in
    seconds ("+Inf" last), not cumulative; keyed, so a row outlives a change
    of the bounds.
    The workers add what their schedulers fired every few seconds, as they
    add the trackers' counts, so an alert reads a p99 without a metrics store."""

    schedules = models.ForeignKey(ScheduleTopic, on_delete=models.CASCADE, related_name="minutes")
    minute = models.DateTimeField()
    late = models.JSONField(default=dict)

    class Meta:
        ordering = ["schedules", "-minute"]
        constraints = [
            models.UniqueConstraint(fields=["schedules", "minute"], name="unique_schedules_minute")
        ]

    def __str__(self) -> str:
        return f"{self.schedules} {self.minute:%Y-%m-%d %H:%M}"


class LifecycleMinute(models.Model):
    """What the analytics pipeline computed for a queue in one minute.

    Recomputed from the topics on every run and upserted, so unlike
    QueueMinute (the trackers' live counts) it is exact once a run covers
    the minute, and it holds the latency quantiles the charts draw.
    """

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="lifecycle_minutes")
    minute = models.DateTimeField()
    produced = models.PositiveIntegerField(default=0)
    acked = models.PositiveIntegerField(default=0)
    redelivered = models.PositiveIntegerField(default=0)
    dead_lettered = models.PositiveIntegerField(default=0)
    latency_p50_ms = models.FloatField(null=True)
    latency_p95_ms = models.FloatField(null=True)
    latency_p99_ms = models.FloatField(null=True)
    processing_p50_ms = models.FloatField(null=True)
    processing_p95_ms = models.FloatField(null=True)
    processing_p99_ms = models.FloatField(null=True)

    class Meta:
        ordering = ["queue", "minute"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "minute"], name="unique_lifecycle_minute")
        ]

    def __str__(self) -> str:
        return f"{self.queue} {self.minute:%Y-%m-%d %H:%M}"
