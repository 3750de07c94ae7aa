"""InFlightView: a queue's open deliveries, materialised from its markers topic.

The console and the API show what is in flight without asking a tracker (no
process shares memory with another): they read the markers the trackers
read. A view starts where the trackers' committed offsets point, at the
oldest start marker still open, so it never reads more than a restarted
tracker would, and then tails the topic a little on every refresh.
"""

import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage
from sortedcontainers import SortedDict

from kmqadmin.kafka.admin.caught_up import caught_up
from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq import headers, markers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.markers import MarkerType

# How many open deliveries find() reads back at most, looking for a copy.
FIND_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class InFlight:
    partition: int
    offset: int  # of the delivered copy in the queue topic
    deadline_ms: int  # 0: due now (retry or reject asked for)


class InFlightView:
    """Thread-safe: web requests share one view per queue."""

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self.skipped = 0
        self._lock = threading.Lock()
        # partition -> queue offset -> deadline, in offset order: a page is a
        # slice, not a pass over every delivery in flight.
        self._open: dict[int, SortedDict] = {}
        group = f"{config.tracker_group_id}__view-{uuid.uuid4().hex[:8]}"
        self._consumer = Consumer(
            consumer_config(config.bootstrap_servers, group, config.kafka_config)
        )
        self._reader = OffsetReader(
            config.bootstrap_servers, config.topic, f"{group}-reader", config.kafka_config
        )
        self._start = self._starting_points()
        self._consumer.assign(self._start)

    def refresh(self, budget_s: float = 0.2) -> None:
        """Reads the markers written since the last refresh, for at most
        ``budget_s``: what is later comes with the next one."""
        with self._lock:
            deadline = time.monotonic() + budget_s
            while time.monotonic() < deadline and not caught_up(self._consumer, self._start):
                records = self._consumer.consume(5000, 0.05)
                if not records:
                    return
                for record in records:
                    if record.error() is None:
                        self._apply(record)

    def catch_up(self, timeout_s: float) -> bool:
        """Reads every marker written before the call, for at most
        ``timeout_s``; True when it got there. A decision that must not
        miss an open delivery (switching a queue's backend) asks for this,
        where a page is content with what one refresh reads."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            ends = {
                tp.partition: self._consumer.get_watermark_offsets(tp, timeout=timeout_s)[1]
                for tp in self._start
            }
        while True:
            if self._reached(ends):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.refresh(min(0.2, left))

    def count(self) -> int:
        with self._lock:
            return sum(len(entries) for entries in self._open.values())

    def oldest_deadline(self) -> int | None:
        """The earliest deadline of an open delivery that is not due now
        (0 means retry or reject asked for), to tell the oldest one's age."""
        with self._lock:
            deadlines = [d for entries in self._open.values() for d in entries.values() if d]
        return min(deadlines, default=None)

    def page(self, limit: int = 50, after: tuple[int, int] | None = None) -> list[InFlight]:
        """Up to ``limit`` open deliveries in (partition, offset) order, after
        the cursor ``after``."""
        page: list[InFlight] = []
        with self._lock:
            for partition in sorted(self._open):
                if after is not None and partition < after[0]:
                    continue
                entries = self._open[partition]
                since = after[1] if after is not None and partition == after[0] else None
                offsets = entries.irange(minimum=since, inclusive=(since is None, True))
                for offset in islice(offsets, limit - len(page)):
                    page.append(InFlight(partition, offset, entries[offset]))
                if len(page) == limit:
                    break
        return page

    def get(self, partition: int, offset: int) -> InFlight | None:
        with self._lock:
            deadline = self._open.get(partition, {}).get(offset)
        return None if deadline is None else InFlight(partition, offset, deadline)

    def records(self, deliveries: Iterable[InFlight]) -> dict[tuple[int, int], KafkaMessage]:
        """The queue records of ``deliveries``, read back in one pass per partition."""
        by_partition: dict[int, list[int]] = {}
        for d in deliveries:
            by_partition.setdefault(d.partition, []).append(d.offset)
        found = {}
        with self._lock:
            for partition, offsets in by_partition.items():
                for offset, record in self._reader.read(partition, offsets).items():
                    found[(partition, offset)] = record
        return found

    def find(self, message_id: str) -> InFlight | None:
        """The open delivery of the message with kmq-id ``message_id``: its
        first copy, or a later copy (same partition, higher offset) whose
        kmq-id header says so."""
        parsed = headers.parse_message_id(message_id)
        if parsed is None or parsed[0] != self.config.topic:
            return None
        _, partition, offset = parsed
        if (first := self.get(partition, offset)) is not None:
            return first
        with self._lock:
            entries = self._open.get(partition, SortedDict())
            later = list(
                islice(entries.irange(minimum=offset, inclusive=(False, True)), FIND_LIMIT)
            )
        wanted = message_id.encode()
        copies = self.records(InFlight(partition, o, 0) for o in later)
        for (p, o), record in sorted(copies.items()):
            if headers.find_in(record, headers.MESSAGE_ID) == wanted:
                return self.get(p, o)
        return None

    def close(self) -> None:
        with self._lock:
            self._consumer.close()
            self._reader.close()

    def _reached(self, ends: dict[int, int]) -> bool:
        """Each partition read up to ``ends`` (its position is past it, or it
        started there: a partition not read yet has no position)."""
        with self._lock:
            positions = self._consumer.position(self._start)
        started = {tp.partition: tp.offset for tp in self._start}
        return all(max(tp.offset, started[tp.partition]) >= ends[tp.partition] for tp in positions)

    def _starting_points(self) -> list[TopicPartition]:
        """Each markers partition from the trackers' committed offset (the
        oldest open start marker), or from the start if none is committed."""
        topic = self.config.markers_topic
        partitions = topic_partitions(self._consumer, topic)
        probe = Consumer(
            consumer_config(
                self.config.bootstrap_servers,
                self.config.tracker_group_id,
                self.config.kafka_config,
            )
        )
        try:
            committed = probe.committed([TopicPartition(topic, p) for p in partitions], timeout=10)
        finally:
            probe.close()  # never subscribed and never commits: the group is untouched
        return [TopicPartition(topic, tp.partition, max(tp.offset, 0)) for tp in committed]

    def _apply(self, record: KafkaMessage) -> None:
        try:
            marker = markers.decode(record.key(), record.value(), record.timestamp()[1])
        except markers.MarkerError:
            self.skipped += 1  # the tracker logs it with its coordinates
            return
        if marker.first < 0 and marker.kind is MarkerType.END:
            return  # a tracker's barrier (tracker.py): no delivery, and no bad input
        if marker.partition != record.partition() or marker.first < 0:
            self.skipped += 1  # the tracker skips it too: it names no delivery of this partition
            return
        entries = self._open.get(marker.partition)
        if entries is None:
            entries = self._open[marker.partition] = SortedDict()
        kind, first, last = marker.kind, marker.first, marker.last
        if kind is MarkerType.START:
            entries.update(dict.fromkeys(range(first, last + 1), marker.deadline))
        elif kind is MarkerType.END:
            for offset in list(entries.irange(first, last)):
                del entries[offset]
        elif first in entries:
            entries[first] = marker.deadline if kind is MarkerType.EXTEND else 0
