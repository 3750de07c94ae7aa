"""A queue topic registered with the console: its companions, backoff and masking."""

import functools
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from kmqadmin.console.models.clusters import Cluster
from kmqadmin.console.validators import queue_topic_name, topic_name
from kmqadmin.kafka.inspect.payload_masking import MAX_PATTERN_CHARS, MaskRuleError, MaskRules
from kmqadmin.kmq import Backoff, QueueConfig, names


class Queue(models.Model):
    """A queue topic with its markers and DLQ topics (kmq's names unless overridden)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="queues")
    topic = models.CharField(max_length=names.MAX_TOPIC_LENGTH, validators=[queue_topic_name])
    group_id = models.CharField(max_length=255)
    backend = models.CharField(
        max_length=5,
        choices=[("kmq", "kmq markers and tracker"), ("share", "Kafka share group (KIP-932)")],
        default="kmq",
        help_text="Who tracks deliveries; not switchable while messages are in flight.",
    )
    marker_format = models.CharField(
        max_length=7,
        choices=[
            ("compact", "compact: a start and an end record per batch"),
            ("kmq", "kmq: SoftwareMill kmq's records, one start and one end per message"),
        ],
        default="compact",
        help_text="How kmq-backend clients write markers; trackers and views read both, so it "
        "may be switched at any time. kmq: for a queue shared with kmq's Java clients.",
    )
    partitions = models.PositiveSmallIntegerField(
        default=6,
        validators=[MinValueValidator(1)],
        help_text="Used when kmqadmin creates the topics.",
    )
    message_timeout_ms = models.PositiveIntegerField(
        default=30_000, validators=[MinValueValidator(1)]
    )
    max_redeliveries = models.PositiveSmallIntegerField(
        default=3, help_text="0: a message that times out goes to the DLQ."
    )
    markers_topic_override = models.CharField(
        max_length=names.MAX_TOPIC_LENGTH, blank=True, validators=[topic_name]
    )
    dlq_topic_override = models.CharField(
        max_length=names.MAX_TOPIC_LENGTH, blank=True, validators=[topic_name]
    )
    backoff_initial_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Blank: redeliver at once; else delay retries by this.",
    )
    backoff_multiplier = models.FloatField(default=2.0, validators=[MinValueValidator(1.0)])
    backoff_max_ms = models.PositiveIntegerField(
        default=3_600_000, validators=[MinValueValidator(1)]
    )
    delayed_sends = models.BooleanField(
        default=False,
        help_text="Messages may be sent for later (the SQS endpoint's DelaySeconds): the queue "
        "gets a schedules topic and a scheduler, as a backoff does.",
    )
    mask_json_paths = models.TextField(
        blank=True,
        help_text="Masking: JSONPath expressions, one a line; what each selects in a JSON "
        "payload shows as *** (e.g. $..card_number).",
    )
    mask_headers = models.TextField(
        blank=True, help_text="Masking: header names, one a line; their values show as ***."
    )
    mask_patterns = models.TextField(
        blank=True,
        help_text="Masking: regular expressions, one a line, run over payload, key and header "
        f"text; what they match shows as ***. At most {MAX_PATTERN_CHARS} characters each.",
    )
    mask_operators = models.BooleanField(
        default=False,
        help_text="Mask for operators too (viewers always see masked data when rules exist; "
        "admins see clear text).",
    )

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

    def masking(self) -> MaskRules:
        """The masking rules, compiled once per distinct set of rules."""
        return _mask_rules(self.mask_json_paths, self.mask_headers, self.mask_patterns)

    def clean(self) -> None:
        """The queue core's own rules (QueueConfig, Backoff): a queue saved
        here is one the dashboard and the workers can run. A share queue has
        no markers topic, so an override of its name is refused, not kept
        unused: the person setting it thinks it does something. A masking
        rule that does not compile is refused under its field, naming it."""
        try:
            self.masking()
        except MaskRuleError as exc:
            raise ValidationError({f"mask_{exc.part}": str(exc)}) from None
        if self.backend == "share" and self.markers_topic_override:
            raise ValidationError(
                {"markers_topic_override": "a share queue has no markers topic: leave it blank"}
            )
        numbers = (self.message_timeout_ms, self.max_redeliveries, self.backoff_multiplier)
        if None not in numbers and self.backoff_max_ms is not None:
            try:
                self._config(bootstrap_servers="", kafka_config={})
            except ValueError as exc:
                raise ValidationError(str(exc)) from None

    def config(self) -> QueueConfig:
        """What the queue core needs to serve this queue."""
        return self._config(self.cluster.bootstrap, self.cluster.kafka_config())

    def _config(self, bootstrap_servers: str, kafka_config: Mapping[str, Any]) -> QueueConfig:
        """The cluster's settings are read only to serve the queue: checking
        the queue's own numbers needs none, so validation never reaches Kafka."""
        return QueueConfig(
            bootstrap_servers=bootstrap_servers,
            topic=self.topic,
            group_id=self.group_id,
            markers_topic=self.markers_topic,
            dlq_topic=self.dlq_topic,
            message_timeout_ms=self.message_timeout_ms,
            max_redeliveries=self.max_redeliveries,
            backoff=self.backoff,
            delayed_sends=self.delayed_sends,
            kafka_config=kafka_config,
            backend=self.backend,
            marker_format=self.marker_format,
        )


@functools.lru_cache(maxsize=256)
def _mask_rules(json_paths: str, headers: str, patterns: str) -> MaskRules:
    return MaskRules.build(_lines(json_paths), _lines(headers), _lines(patterns))


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


# What a person sets on a registration: the registry's and /admin/'s form and
# the API's serializer both take these (the API also answers the topic names).
REGISTRATION_FIELDS = [
    "cluster",
    "topic",
    "group_id",
    "backend",
    "marker_format",
    "partitions",
    "message_timeout_ms",
    "max_redeliveries",
    "markers_topic_override",
    "dlq_topic_override",
    "backoff_initial_ms",
    "backoff_multiplier",
    "backoff_max_ms",
    "mask_json_paths",
    "mask_headers",
    "mask_patterns",
    "mask_operators",
]
