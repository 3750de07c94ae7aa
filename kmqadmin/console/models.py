"""Configuration the console keeps in SQL; queue *state* lives only in Kafka."""

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from kmqadmin.kmq import Backoff, QueueConfig, names
from kmqadmin.scheduler import SchedulerConfig


class Cluster(models.Model):
    """A Kafka cluster; blank bootstrap servers mean KAFKA_BOOTSTRAP_SERVERS."""

    name = models.SlugField(unique=True)
    bootstrap_servers = models.CharField(
        max_length=500, blank=True, help_text="Blank: use KAFKA_BOOTSTRAP_SERVERS."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_servers or settings.KAFKA_BOOTSTRAP_SERVERS


class Queue(models.Model):
    """A queue topic with its markers and DLQ topics (kmq's names unless overridden)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="queues")
    topic = models.CharField(max_length=names.MAX_TOPIC_LENGTH)
    group_id = models.CharField(max_length=255)
    partitions = models.PositiveSmallIntegerField(
        default=6, help_text="Used when kmqadmin creates the topics."
    )
    message_timeout_ms = models.PositiveIntegerField(default=30_000)
    max_redeliveries = models.PositiveSmallIntegerField(default=3)
    markers_topic_override = models.CharField(max_length=names.MAX_TOPIC_LENGTH, blank=True)
    dlq_topic_override = models.CharField(max_length=names.MAX_TOPIC_LENGTH, blank=True)
    backoff_initial_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Blank: redeliver at once; else delay retries by this."
    )
    backoff_multiplier = models.FloatField(default=2.0)
    backoff_max_ms = models.PositiveIntegerField(default=3_600_000)

    class Meta:
        ordering = ["cluster__name", "topic"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "topic"], name="unique_queue_topic")
        ]

    def __str__(self) -> str:
        return self.topic

    @property
    def markers_topic(self) -> str:
        return self.markers_topic_override or names.markers_topic(self.topic)

    @property
    def dlq_topic(self) -> str:
        return self.dlq_topic_override or names.dlq_topic(self.topic)

    @property
    def backoff(self) -> Backoff | None:
        if self.backoff_initial_ms is None:
            return None
        return Backoff(self.backoff_initial_ms, self.backoff_multiplier, self.backoff_max_ms)

    def config(self) -> QueueConfig:
        """What the queue core needs to serve this queue."""
        return QueueConfig(
            bootstrap_servers=self.cluster.bootstrap,
            topic=self.topic,
            group_id=self.group_id,
            markers_topic=self.markers_topic,
            dlq_topic=self.dlq_topic,
            message_timeout_ms=self.message_timeout_ms,
            max_redeliveries=self.max_redeliveries,
            backoff=self.backoff,
        )


def validate_topic_names(value: object) -> None:
    """A list of Kafka topic names (an allowlist of targets)."""
    if not isinstance(value, list):
        raise ValidationError("expected a list of topic names")
    for name in value:
        if not isinstance(name, str) or not re.fullmatch(names.TOPIC_NAME, name):
            raise ValidationError(f"{name!r} is not a Kafka topic name")


class ScheduleTopic(models.Model):
    """A schedules topic of its own (etf1's), served by the workers' schedulers.

    A queue with a backoff has one too; it is derived from the queue, not
    registered here.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="schedules")
    topic = models.CharField(max_length=names.MAX_TOPIC_LENGTH)
    group_id = models.CharField(max_length=255)
    partitions = models.PositiveSmallIntegerField(
        default=6, help_text="Used when kmqadmin creates the topic."
    )
    allowed_targets = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_topic_names],
        help_text="Topics its schedules may fire into; empty: any topic.",
    )

    class Meta:
        ordering = ["cluster__name", "topic"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "topic"], name="unique_schedules_topic")
        ]

    def __str__(self) -> str:
        return self.topic

    def config(self) -> SchedulerConfig:
        return SchedulerConfig(
            bootstrap_servers=self.cluster.bootstrap,
            topic=self.topic,
            group_id=self.group_id,
            allowed_targets=frozenset(self.allowed_targets),
        )


class AuditEntry(models.Model):
    """One action, by whom, on what, and the target before and after it."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=64, db_index=True)
    target = models.CharField(max_length=500, db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.user} {self.action} {self.target}"


class Job(models.Model):
    """Who started a background job: its progress is theirs and the admins' to see."""

    task_id = models.CharField(max_length=255, unique=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.task_id


class QueueMinute(models.Model):
    """Redeliveries and dead letters of a queue in one minute, as its trackers
    counted them: the workers add their counts every few seconds, so the
    dashboard shows rates without reading any topic."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="minutes")
    minute = models.DateTimeField()
    redelivered = models.PositiveIntegerField(default=0)
    dead_lettered = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["queue", "-minute"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "minute"], name="unique_queue_minute")
        ]

    def __str__(self) -> str:
        return f"{self.queue} {self.minute:%Y-%m-%d %H:%M}"


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
