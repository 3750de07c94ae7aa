"""QueueGauges: how much is waiting, read from offsets alone (no records read).

Depth is what the workers' group has not yet taken: per queue partition,
the end offset minus the group's committed offset. The DLQ's size is its
end minus its start. Both count offsets, as Kafka's lag tools do, so a
transaction's commit marker counts too (the tracker writes letters and
copies in transactions): exact counts would mean reading the records. Both
are a few metadata round trips, so the dashboard can ask every few seconds.
"""

import threading
import uuid

from confluent_kafka import Consumer, TopicPartition

from kmqadmin.kafka.config import consumer_config
from kmqadmin.kafka.topics import topic_partitions

from .config import QueueConfig


class QueueGauges:
    """Thread-safe: the web process keeps one per queue."""

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        # The workers' group id, only to read its committed offsets: this
        # consumer never subscribes, so it never joins or commits.
        self._group = Consumer(
            consumer_config(config.bootstrap_servers, config.group_id, config.kafka_config)
        )
        self._plain = Consumer(
            consumer_config(
                config.bootstrap_servers, f"kmq-gauges-{uuid.uuid4().hex[:8]}", config.kafka_config
            )
        )

    def depth(self) -> int:
        """Messages not yet taken by the workers (those never polled)."""
        with self._lock:
            partitions = self._partitions(self.config.topic)
            committed = self._group.committed(partitions, timeout=10)
            total = 0
            for tp in committed:
                low, high = self._plain.get_watermark_offsets(tp, timeout=10)
                start = tp.offset if tp.offset >= 0 else low
                total += max(0, high - start)
            return total

    def dead_letters(self) -> int:
        with self._lock:
            total = 0
            for tp in self._partitions(self.config.dlq_topic):
                low, high = self._plain.get_watermark_offsets(tp, timeout=10)
                total += max(0, high - low)
            return total

    def close(self) -> None:
        with self._lock:
            self._group.close()
            self._plain.close()

    def _partitions(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in topic_partitions(self._plain, topic)]
