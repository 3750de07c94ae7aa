"""SchedulerConfig: one schedules topic and how its schedulers behave."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.security.masking import masked

DAY_MS = 86_400_000

# Latest version per key is all a schedules topic needs to keep.
TOPIC_CONFIG = {"cleanup.policy": "compact"}


@dataclass(frozen=True)
class SchedulerConfig:
    """Everything the clients and schedulers of one schedules topic agree on.

    ``horizon_ms``: only schedules due within it are held in memory; the rest
    are re-read from the topic as it advances (every half horizon).
    ``lookahead_ms``: how early a due schedule's payload is read back, so it
    fires on time with its read batched with its neighbours' (payloads due
    within twice this are held in memory). A read scans the partition between
    the due offsets, so the longer this, the fewer scans.
    ``allowed_targets``: the topics its schedules may fire into; empty means
    any topic, as etf1 allows. Anyone who can write the schedules topic can
    name any target, so the scheduler itself skips the others.
    """

    bootstrap_servers: str
    topic: str
    group_id: str
    horizon_ms: int = DAY_MS
    lookahead_ms: int = 2000
    kafka_config: Mapping[str, Any] = field(default_factory=dict)
    allowed_targets: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kafka_config", masked(self.kafka_config))  # repr is logged
        object.__setattr__(self, "allowed_targets", frozenset(self.allowed_targets))
        if self.horizon_ms < 1000:
            raise ValueError("horizon_ms must be at least 1000")
        if not 0 <= self.lookahead_ms < self.horizon_ms // 4:
            raise ValueError("lookahead_ms must be between 0 and a quarter of the horizon")

    def allows(self, target_topic: str) -> bool:
        """Whether a schedule of this topic may fire into ``target_topic``."""
        return not self.allowed_targets or target_topic in self.allowed_targets

    def ensure_topics(self, partitions: int = 6) -> list[str]:
        """Creates the compacted schedules topic if it is missing."""
        return ensure_topics(
            self.bootstrap_servers,
            {self.topic: partitions},
            configs={self.topic: TOPIC_CONFIG},
            extra=self.kafka_config,
        )
