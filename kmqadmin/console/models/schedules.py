"""A schedules topic of its own, served by the workers' schedulers."""

from django.core.validators import MinValueValidator
from django.db import models

from kmqadmin.console.models.clusters import Cluster
from kmqadmin.console.validators import topic_name, topic_names
from kmqadmin.kmq import names
from kmqadmin.scheduler import SchedulerConfig


class ScheduleTopic(models.Model):
    """A schedules topic of its own (etf1's), served by the workers' schedulers.

    A queue with a backoff has one too; it is derived from the queue, not
    registered here.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="schedules")
    topic = models.CharField(max_length=names.MAX_TOPIC_LENGTH, validators=[topic_name])
    group_id = models.CharField(max_length=255)
    partitions = models.PositiveSmallIntegerField(
        default=6,
        validators=[MinValueValidator(1)],
        help_text="Used when kmqadmin creates the topic.",
    )
    allowed_targets = models.JSONField(
        default=list,
        blank=True,
        validators=[topic_names],
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
            kafka_config=self.cluster.kafka_config(),
            allowed_targets=frozenset(self.allowed_targets),
        )
