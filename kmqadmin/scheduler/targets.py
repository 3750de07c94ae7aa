"""Targets: whether a read-back schedule may fire into the topic it names.

Two checks before a schedule is armed: the schedules topic allows the target
(SchedulerConfig.allowed_targets; a schedule outside them is never fired),
and the target topic exists, asked of the cluster once per topic and then
remembered. A schedule that fails either stays in the schedules topic, for
an operator to see and cancel, or to fire at the next start once its topic
exists; each failure is counted for the scheduler's stats and logged.
"""

import logging

from confluent_kafka import Consumer

from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.errors import TopicMissing
from kmqadmin.scheduler.config import SchedulerConfig

log = logging.getLogger(__name__)


class Targets:
    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.forbidden = 0  # not among the allowed targets: never fired
        self.undeliverable = 0  # a missing topic: fired at a later start, once it exists
        self._known_topics: set[str] = set()

    def take(self, consumer: Consumer, partition: int, offset: int, target_topic: str) -> bool:
        """Whether the schedule at (partition, offset) may be armed to fire
        into ``target_topic``; ``consumer`` asks the cluster for the topic."""
        if not self.config.allows(target_topic):
            self._forbid(partition, offset, target_topic)
            return False
        if self._topic_exists(consumer, target_topic):
            return True
        log.error(
            "schedule %s/%d/%d targets missing topic %r; it stays in the "
            "schedules topic and fires at the next start once the topic exists",
            self.config.topic,
            partition,
            offset,
            target_topic,
        )
        self.undeliverable += 1
        return False

    def _forbid(self, partition: int, offset: int, target_topic: str) -> None:
        """Never fired; the record stays for an operator to see and cancel."""
        log.error(
            "schedule %s/%d/%d targets %r, which is not among the topic's allowed targets; "
            "skipped, never fired",
            self.config.topic,
            partition,
            offset,
            target_topic,
        )
        self.forbidden += 1

    def _topic_exists(self, consumer: Consumer, name: str) -> bool:
        if name not in self._known_topics:
            try:
                topic_partitions(consumer, name)
            except TopicMissing:
                return False
            self._known_topics.add(name)
        return True
