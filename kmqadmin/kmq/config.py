"""QueueConfig: one queue's topics, group ids and delivery rules."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kmqadmin.kafka.topics import ensure_topics

from . import names


@dataclass(frozen=True)
class QueueConfig:
    """Everything a producer, client and tracker of one queue agree on.

    ``markers_topic``, ``dlq_topic`` and ``tracker_group_id`` default to kmq's
    names derived from ``topic`` and ``group_id``.
    """

    bootstrap_servers: str
    topic: str
    group_id: str
    markers_topic: str = ""
    dlq_topic: str = ""
    tracker_group_id: str = ""
    message_timeout_ms: int = 30_000
    max_redeliveries: int = 3
    kafka_config: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        defaults = {
            "markers_topic": names.markers_topic(self.topic),
            "dlq_topic": names.dlq_topic(self.topic),
            "tracker_group_id": f"{self.group_id}__tracker",
        }
        for name, default in defaults.items():
            if not getattr(self, name):
                object.__setattr__(self, name, default)
        if self.message_timeout_ms <= 0:
            raise ValueError("message_timeout_ms must be positive")
        if self.max_redeliveries < 0:
            raise ValueError("max_redeliveries must be zero or more")

    def ensure_topics(self, partitions: int = 6) -> list[str]:
        """Creates the queue, markers and DLQ topics that are missing.

        Markers get the queue's partition count: markers for queue partition
        p live on markers partition p. Returns the names created.
        """
        return ensure_topics(
            self.bootstrap_servers,
            {self.topic: partitions, self.markers_topic: partitions, self.dlq_topic: partitions},
            extra=self.kafka_config,
        )
