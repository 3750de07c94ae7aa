"""QueueConfig: one queue's topics, group ids and delivery rules."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.topics import (
    admin_client,
    cluster_metadata,
    ensure_topics,
    partition_counts,
)
from kmqadmin.kafka.client.clock import to_ms
from kmqadmin.kafka.client.security.masking import masked
from kmqadmin.kmq import markers, names
from kmqadmin.kmq.backoff import Backoff
from kmqadmin.scheduler.config import TOPIC_CONFIG as SCHEDULES_TOPIC_CONFIG
from kmqadmin.scheduler.config import SchedulerConfig

Backend = Literal["kmq", "share"]
# "kmq": start/end markers and a redelivery tracker, any Kafka version.
# "share": a KIP-932 share group on the queue topic; the broker tracks deliveries.
BACKENDS: tuple[Backend, ...] = ("kmq", "share")
ShareAcquireMode = Literal["record_limit", "batch_optimized"]
# How a share queue's consumer acquires records (KIP-1206's names):
# "record_limit": our consumer (kafka.share_consumer), exactly what poll()
#   asks for, with RENEW; for work of any speed.
# "batch_optimized": librdkafka's ShareConsumer, whole producer batches per
#   fetch; several times faster for fast work, but every record acquired
#   is locked and counted from the fetch on, and extend() is not available.
SHARE_ACQUIRE_MODES: tuple[ShareAcquireMode, ...] = ("record_limit", "batch_optimized")
MarkerFormat = Literal["compact", "kmq"]
# How a kmq-backend client writes its markers (kmq/markers.py):
# "compact": a start range per partition of a poll batch and an end range
#   per run of acks; what a queue of our own clients uses.
# "kmq": SoftwareMill kmq's records, a start and an end per message, byte
#   for byte; for a queue shared with kmq's Java clients.
# Trackers, views and the pipeline read both, so a queue may switch.
MARKER_FORMATS: tuple[MarkerFormat, ...] = ("compact", "kmq")
# A week of per-minute counts is what the console charts; older ones go.
COUNTS_TOPIC_CONFIG = {"retention.ms": str(to_ms(7 * 24 * 3600))}


@dataclass(frozen=True)
class QueueConfig:
    """Everything a producer, client and tracker of one queue agree on.

    ``markers_topic``, ``dlq_topic`` and ``tracker_group_id`` default to kmq's
    names derived from ``topic`` and ``group_id``. With a ``backoff``, copies
    are delayed through a scheduler on ``schedules_topic``, and with
    ``delayed_sends`` messages sent for later (the SQS endpoint's
    DelaySeconds); run one with ``scheduler_config()``. ``backend`` picks
    who tracks deliveries: our markers and tracker ("kmq") or the broker's
    share group ("share"; no markers topic, no tracker; clients publish
    counts on ``counts_topic``).
    ``share_acquire_mode`` picks a share queue's consumer (SHARE_ACQUIRE_MODES),
    ``marker_format`` a kmq queue's markers (MARKER_FORMATS).
    """

    bootstrap_servers: str
    topic: str
    group_id: str
    markers_topic: str = ""
    dlq_topic: str = ""
    tracker_group_id: str = ""
    message_timeout_ms: int = 30_000
    max_redeliveries: int = 3
    backoff: Backoff | None = None
    schedules_topic: str = ""
    kafka_config: Mapping[str, Any] = field(default_factory=dict)
    backend: Backend = "kmq"
    counts_topic: str = ""
    share_acquire_mode: ShareAcquireMode = "record_limit"
    marker_format: MarkerFormat = "compact"
    delayed_sends: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "kafka_config", masked(self.kafka_config))  # repr is logged
        defaults = {
            "markers_topic": names.markers_topic(self.topic),
            "dlq_topic": names.dlq_topic(self.topic),
            "tracker_group_id": f"{self.group_id}__tracker",
            "schedules_topic": names.schedules_topic(self.topic),
            "counts_topic": names.counts_topic(self.topic),
        }
        if isinstance(self.backoff, Mapping):  # from JSON or a settings file
            object.__setattr__(self, "backoff", Backoff(**self.backoff))
        for name, default in defaults.items():
            if not getattr(self, name):
                object.__setattr__(self, name, default)
        if not 0 < self.message_timeout_ms < markers.ABSOLUTE_FROM:
            raise ValueError(
                f"message_timeout_ms must be positive and below {markers.ABSOLUTE_FROM}"
            )
        if self.max_redeliveries < 0:
            raise ValueError("max_redeliveries must be zero or more")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.marker_format not in MARKER_FORMATS:
            raise ValueError(
                f"marker_format must be one of {', '.join(MARKER_FORMATS)}, "
                f"got {self.marker_format!r}"
            )
        if self.share_acquire_mode not in SHARE_ACQUIRE_MODES:
            raise ValueError(
                f"share_acquire_mode must be one of {', '.join(SHARE_ACQUIRE_MODES)}, "
                f"got {self.share_acquire_mode!r}"
            )

    def ensure_topics(self, partitions: int = 6) -> list[str]:
        """Creates the queue's topics that are missing; returns the names created.

        kmq: queue, markers and DLQ; markers get the queue's partition count
        (markers for queue partition p live on markers partition p). share:
        queue, DLQ and the one-partition counts topic. With a backoff, the
        compacted schedules topic too. A share queue's group gets its configs
        (share_group.configure), so any client, ours or not, that joins it
        starts from the earliest record and reads committed ones only.
        """
        created = ensure_topics(
            self.bootstrap_servers,
            self.topics(partitions),
            configs={
                self.schedules_topic: SCHEDULES_TOPIC_CONFIG,
                self.counts_topic: COUNTS_TOPIC_CONFIG,
            },
            extra=self.kafka_config,
        )
        if self.backend == "share":
            share_group.configure(self)
        return created

    def topics(self, partitions: int = 6) -> dict[str, int]:
        """The queue's topics, each with the partitions it is created with."""
        topics = dict.fromkeys([self.topic, self.dlq_topic], partitions)
        if self.backend == "kmq":
            topics[self.markers_topic] = partitions
        else:
            topics[self.counts_topic] = 1
        if self.has_scheduler:
            topics[self.schedules_topic] = partitions
        return topics

    def missing_topics(self, timeout: float = 2.0) -> list[str]:
        """The queue's topics the cluster does not have; BrokerUnavailable
        when it does not answer within ``timeout``."""
        admin = admin_client(self.bootstrap_servers, self.kafka_config)
        metadata = cluster_metadata(self.bootstrap_servers, timeout, admin)
        counts = partition_counts(metadata, list(self.topics()))
        return [name for name, count in counts.items() if count is None]

    @property
    def has_scheduler(self) -> bool:
        """Whether something is ever delayed on ``schedules_topic``."""
        return self.backoff is not None or self.delayed_sends

    def scheduler_config(self) -> SchedulerConfig:
        """The scheduler that delivers this queue's delayed copies and sends."""
        return SchedulerConfig(
            bootstrap_servers=self.bootstrap_servers,
            topic=self.schedules_topic,
            group_id=f"{self.group_id}__scheduler",
            kafka_config=self.kafka_config,
            allowed_targets=frozenset([self.topic]),  # delayed copies go back to the queue only
        )
