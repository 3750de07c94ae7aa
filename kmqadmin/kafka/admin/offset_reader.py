"""Reads back records at known offsets, batched per partition.

The tracker reads the originals it must redeliver and the scheduler the
payloads it must fire: both hold only coordinates in memory and fetch the
record when it is needed.
"""

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client import idle_clients
from kmqadmin.kafka.client.config import consumer_config

log = logging.getLogger(__name__)

# How long a first read waits for its topic's metadata before reading anyway.
LEARN_TIMEOUT_S = 1.0
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


class ReadTimeout(Exception):
    """A run of offsets could not be read in time: the broker is slow or
    away, or the offsets lie past the partition's end.

    Distinct from a record that is gone: the caller must not take the
    records it did not get for deleted, or it would drop work it still owes.
    ``found`` holds what was read before the time ran out.
    """

    def __init__(self, message: str, found: dict[int, KafkaMessage]) -> None:
        super().__init__(message)
        self.found = found


class OffsetReader:
    """An assign-only consumer of one topic (its group id is never joined or
    committed). Between reads it has nothing assigned and is served by
    idle_clients, so its log lines come out when librdkafka writes them."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        group_id: str,
        extra: Mapping[str, Any] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.topic = topic
        self.timeout = timeout
        # A random-access reader: a fetch the broker holds open for lack of new
        # data would delay the next seek, and with it every read.
        config = {"fetch.wait.max.ms": 5, **(extra or {})}
        self._consumer = Consumer(consumer_config(bootstrap_servers, group_id, config))
        self._using = threading.RLock()  # a read, newest(), close() or the idle pump
        self._closed = False
        self._topic_known = False
        idle_clients.watch(self)

    def read(self, partition: int, offsets: Iterable[int]) -> dict[int, KafkaMessage]:
        """The records at ``offsets``; an offset with no record (deleted by
        retention or compaction, aborted) is absent from the result rather
        than waited for. Raises ReadTimeout if the reader could not get past
        them in time."""
        # A negative offset holds no record, and assigning it is refused.
        wanted = {offset for offset in offsets if offset >= 0}
        found: dict[int, KafkaMessage] = {}
        with self._using:
            self._learn_topic()
            try:
                for first, last in runs(wanted):
                    tp = TopicPartition(self.topic, partition, first)
                    self._read_run(tp, last, wanted, found)
            finally:
                self._consumer.unassign()  # no idle fetching between reads
        return found

    def newest(self, limit: int) -> list[KafkaMessage]:
        """At most ``limit`` of the topic's newest records, the window split
        evenly over its partitions: what a search may look through without
        ever scanning a whole topic."""
        found: list[KafkaMessage] = []
        with self._using:
            partitions = topic_partitions(self._consumer, self.topic, self.timeout)
            per = -(-limit // len(partitions))
            for partition in partitions:
                tp = TopicPartition(self.topic, partition)
                low, high = self._consumer.get_watermark_offsets(tp, self.timeout)
                found.extend(self.read(partition, range(max(low, high - per), high)).values())
        return found

    def close(self) -> None:
        idle_clients.unwatch(self)
        with self._using:
            self._closed = True
            self._consumer.close()

    def serve_idle(self) -> None:
        """What librdkafka queued (log lines) handed over; nothing is assigned
        between reads, so the poll returns no record."""
        if not self._using.acquire(blocking=False):
            return  # reading, and so polling
        try:
            if not self._closed:
                self._consumer.poll(0)
        finally:
            self._using.release()

    def _learn_topic(self) -> None:
        """A topic first met in assign() is looked up only on librdkafka's
        next once-a-second metadata scan, so a new reader's first read would
        wait up to 1 s for it (a scheduler's first retry fired that late):
        asked for once up front, it is known before the first assign."""
        if self._topic_known:
            return
        try:
            # Short: a broker that is away answers the read itself no sooner.
            self._consumer.list_topics(self.topic, min(self.timeout, LEARN_TIMEOUT_S))
        except KafkaException as exc:  # the read finds the topic on its own, later
            log.warning("%s: no metadata yet (%s)", self.topic, exc)
            return
        self._topic_known = True

    def _read_run(
        self, tp: TopicPartition, last: int, wanted: set[int], found: dict[int, KafkaMessage]
    ) -> None:
        self._consumer.assign([tp])
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            # A short wait: a run may hold fewer records than offsets (transaction
            # markers take offsets too), so "enough records" may never come.
            for record in self._consumer.consume(1000, 0.005):
                if record.error() is None and record.offset() in wanted:
                    found[record.offset()] = record
            position = self._consumer.position([tp])[0].offset
            if position > last:
                return
            # Offsets at or past the high watermark (from the last fetch) are
            # not written: a marker naming one is hostile or names a topic
            # since recreated. Absent, not waited for until the deadline.
            low, high = self._consumer.get_watermark_offsets(tp, cached=True)
            if 0 <= high <= position:
                return
            # Offsets before the log's start were deleted (retention, a purge's
            # DeleteRecords): a fetch there is reset to the start, and the
            # position stays unknown until a record comes, which may never.
            if low > last:
                return
        unread = f"{tp.topic}/{tp.partition} offsets {tp.offset}..{last} unread"
        raise ReadTimeout(f"{unread} after {self.timeout} s", found)
