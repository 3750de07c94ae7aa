"""Reads back the original records the tracker must redeliver, batched per partition."""

import time
from collections.abc import Iterable

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.config import consumer_config

from .config import QueueConfig

# Offsets closer than this are read in one pass instead of seeking to each.
SEEK_GAP = 256


def runs(offsets: Iterable[int], gap: int = SEEK_GAP) -> list[tuple[int, int]]:
    """Sorted offsets grouped into (first, last) runs with gaps of at most ``gap``."""
    result: list[tuple[int, int]] = []
    for offset in sorted(offsets):
        if result and offset - result[-1][1] <= gap:
            result[-1] = (result[-1][0], offset)
        else:
            result.append((offset, offset))
    return result


class QueueReader:
    """An assign-only consumer of the queue topic (no group, never commits)."""

    def __init__(self, config: QueueConfig, timeout: float = 10.0) -> None:
        self.topic = config.topic
        self.timeout = timeout
        # A random-access reader: a fetch the broker holds open for lack of new
        # data would delay the next seek, and with it every redelivery.
        extra = {"fetch.wait.max.ms": 5, **config.kafka_config}
        self._consumer = Consumer(
            consumer_config(config.bootstrap_servers, f"{config.tracker_group_id}__reader", extra)
        )

    def read(self, partition: int, offsets: Iterable[int]) -> dict[int, KafkaMessage]:
        """The records at ``offsets``; an offset with no record (deleted by
        retention, aborted) is absent from the result rather than waited for."""
        wanted = set(offsets)
        found: dict[int, KafkaMessage] = {}
        for first, last in runs(wanted):
            self._read_run(TopicPartition(self.topic, partition, first), last, wanted, found)
        self._consumer.unassign()  # no idle fetching between redeliveries
        return found

    def close(self) -> None:
        self._consumer.close()

    def _read_run(
        self, tp: TopicPartition, last: int, wanted: set[int], found: dict[int, KafkaMessage]
    ) -> None:
        self._consumer.assign([tp])
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for record in self._consumer.consume(min(last - tp.offset + 1, 1000), 0.2):
                if record.error() is None and record.offset() in wanted:
                    found[record.offset()] = record
            position = self._consumer.position([tp])[0].offset
            if position > last:
                return
