"""QueueGauges: how many messages are waiting, and how many letters the DLQ holds.

Depth is what the workers' group has not yet taken: per queue partition,
the committed records from the group's committed offset to the last stable
offset (a share queue's from where its share group stands). The DLQ's
size is its committed records. Both are counts of
records, not offsets: the tracker writes letters and redelivered copies in
transactions, whose markers take offsets too, so offsets alone counted
every letter twice. The records are counted by reading them once each
(kafka/admin/record_count.py): after the first answer a gauge reads only what
arrived since. Answers are kept for ``max_age_s`` (1 s), so any number of
live pages on one queue cost the broker one reading a second.
"""

import math
import threading
import time
import uuid
from collections.abc import Callable, Mapping

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from kmqadmin.kafka.admin.busy_coordinator import once_it_answers
from kmqadmin.kafka.admin.record_count import RecordCount
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq.config import QueueConfig

# A gauge's whole reading, every round trip included: a partition whose
# leader is being elected makes it fail (a 503 with Retry-After) within a
# page's 3 s, not after librdkafka's 10 s timeouts.
TIMEOUT_S = 2.0


class QueueGauges:
    """Thread-safe: the web process keeps one per queue."""

    def __init__(
        self, config: QueueConfig, max_age_s: float = 1.0, timeout_s: float = TIMEOUT_S
    ) -> None:
        self.config = config
        self.max_age_s, self.timeout_s = max_age_s, timeout_s
        self._until = 0.0  # the current reading's deadline (monotonic)
        self._lock = threading.Lock()
        self._answers: dict[str, tuple[float, int]] = {}  # gauge -> (when, value)
        # The workers' group id, only to read its committed offsets: this
        # consumer never subscribes, so it never joins or commits.
        self._group = Consumer(
            consumer_config(config.bootstrap_servers, config.group_id, config.kafka_config)
        )
        self._plain = Consumer(
            consumer_config(
                config.bootstrap_servers,
                f"kmq-gauges-{uuid.uuid4().hex[:8]}",
                {"fetch.wait.max.ms": 5, **config.kafka_config},
            )
        )
        self._waiting = RecordCount(self._plain, config.topic)
        self._letters = RecordCount(self._plain, config.dlq_topic)

    def depth(self) -> int:
        """Messages not yet taken by the workers (those never polled)."""
        return self._kept("depth", self._depth)

    def dead_letters(self) -> int:
        return self._kept("dead_letters", self._dead_letters)

    def waiting_from(self, starts: Mapping[int, int]) -> int:
        """The queue's records from each partition's offset in ``starts`` (its
        first record where none is given) to its last stable offset: a share
        queue's depth starts where its share group stands."""
        with self._lock:
            self._until = time.monotonic() + self.timeout_s
            return self._waiting_from(starts)

    def _kept(self, gauge: str, read: Callable[[], int]) -> int:
        with self._lock:
            at, value = self._answers.get(gauge, (-math.inf, 0))
            if time.monotonic() - at >= self.max_age_s:
                self._until = time.monotonic() + self.timeout_s
                value = read()
                self._answers[gauge] = (time.monotonic(), value)
            return value

    def _depth(self) -> int:
        partitions = self._partitions(self.config.topic)
        committed = self._committed(partitions)
        starts = {tp.partition: tp.offset for tp in committed if tp.offset >= 0}
        return self._waiting_from(starts, partitions)

    def _committed(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """The group's committed offsets. A coordinator that moves or is still
        loading (a broker just started) says so for a moment: asked again
        until the gauge's time is up, then its error goes to the caller."""
        return once_it_answers(
            lambda: self._group.committed(partitions, timeout=self._left()), self._until
        )

    def _waiting_from(
        self, starts: Mapping[int, int], partitions: list[TopicPartition] | None = None
    ) -> int:
        """``partitions``: the queue's, when the caller already asked for them."""
        stretches = {}
        for tp in partitions or self._partitions(self.config.topic):
            low, end = self._plain.get_watermark_offsets(tp, timeout=self._left())
            stretches[tp.partition] = (max(starts.get(tp.partition, low), low), end)
        return self._waiting.between(stretches, self._left())

    def _dead_letters(self) -> int:
        stretches = {}
        for tp in self._partitions(self.config.dlq_topic):
            stretches[tp.partition] = self._plain.get_watermark_offsets(tp, timeout=self._left())
        return self._letters.between(stretches, self._left())

    def close(self) -> None:
        with self._lock:
            self._group.close()
            self._plain.close()

    def _partitions(self, topic: str) -> list[TopicPartition]:
        found = topic_partitions(self._plain, topic, self._left())
        return [TopicPartition(topic, p) for p in found]

    def _left(self) -> float:
        """What remains of the reading's time; KafkaException once it is spent."""
        left = self._until - time.monotonic()
        if left <= 0:
            raise KafkaException(
                KafkaError(
                    KafkaError._TIMED_OUT,
                    f"the gauges of {self.config.topic} took more than {self.timeout_s:.0f} s",
                )
            )
        return left
