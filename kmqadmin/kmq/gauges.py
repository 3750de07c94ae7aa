"""QueueGauges: how much is waiting, read from offsets alone (no records read).

Depth is what the workers' group has not yet taken: per queue partition,
the end offset minus the group's committed offset. The DLQ's size is its
end minus its start. Both count offsets, as Kafka's lag tools do, so a
transaction's commit marker counts too (the tracker writes letters and
copies in transactions): exact counts would mean reading the records. Both
are a few metadata round trips per partition; answers are kept for
``max_age_s`` (1 s), so any number of live pages on one queue cost the
broker one set of round trips a second.
"""

import math
import threading
import time
import uuid
from collections.abc import Callable

from confluent_kafka import Consumer, TopicPartition

from kmqadmin.kafka.config import consumer_config
from kmqadmin.kafka.topics import topic_partitions

from .config import QueueConfig


class QueueGauges:
    """Thread-safe: the web process keeps one per queue."""

    def __init__(self, config: QueueConfig, max_age_s: float = 1.0) -> None:
        self.config = config
        self.max_age_s = max_age_s
        self._lock = threading.Lock()
        self._answers: dict[str, tuple[float, int]] = {}  # gauge -> (when, value)
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
        return self._kept("depth", self._depth)

    def dead_letters(self) -> int:
        return self._kept("dead_letters", self._dead_letters)

    def _kept(self, gauge: str, read: Callable[[], int]) -> int:
        with self._lock:
            at, value = self._answers.get(gauge, (-math.inf, 0))
            if time.monotonic() - at >= self.max_age_s:
                value = read()
                self._answers[gauge] = (time.monotonic(), value)
            return value

    def _depth(self) -> int:
        partitions = self._partitions(self.config.topic)
        committed = self._group.committed(partitions, timeout=10)
        total = 0
        for tp in committed:
            low, high = self._plain.get_watermark_offsets(tp, timeout=10)
            start = tp.offset if tp.offset >= 0 else low
            total += max(0, high - start)
        return total

    def _dead_letters(self) -> int:
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
