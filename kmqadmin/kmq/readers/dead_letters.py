"""DeadLetters: browse a queue's DLQ by offsets, and send letters back (redrive).

Pages are read from a seek, never by scanning the topic: a page starts at an
offset (or at the first record at or after a time, found with
offsets_for_times) and reads at most a capped window of records, so a
filter that matches little costs a bounded read and says where to go on.
"""

import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kafka.admin.stretch import Stretch
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.client.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import headers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.copies import send_again
from kmqadmin.kmq.draft import Draft

# A page reads at most this many records per record it may return.
SCAN_FACTOR = 20


@dataclass(frozen=True)
class LetterFilter:
    """Which letters: every field given must hold (all None: every letter)."""

    key: bytes | None = None  # the key contains it
    reason: bytes | None = None  # kmq-dlq-reason is it
    header: tuple[str, bytes] | None = None  # this header has this value
    contains: bytes | None = None  # the payload contains it
    since_ms: int | None = None  # the record's timestamp is at least it
    until_ms: int | None = None  # and less than it

    def __call__(self, record: KafkaMessage) -> bool:
        if self.key is not None and self.key not in (record.key() or b""):
            return False
        if self.contains is not None and self.contains not in (record.value() or b""):
            return False
        at = record.timestamp()[1]
        if self.since_ms is not None and at < self.since_ms:
            return False
        if self.until_ms is not None and at >= self.until_ms:
            return False
        if self.reason is None and self.header is None:
            return True
        try:
            found = read_headers(record)
        except UndecodableRecord:  # what it holds is unknown, but why it is here is not
            return self.header is None and self.reason == UNDECODABLE.encode()
        if self.reason is not None and headers.find(found, headers.DLQ_REASON) != self.reason:
            return False
        return self.header is None or headers.find(found, self.header[0]) == self.header[1]

    def to_json(self) -> dict:
        """Plain text fields, to hand the filter to a task."""
        text = {k: None if v is None else v.decode() for k, v in self._bytes().items()}
        header = None if self.header is None else [self.header[0], self.header[1].decode()]
        return text | {"header": header, "since_ms": self.since_ms, "until_ms": self.until_ms}

    @classmethod
    def from_json(cls, data: dict) -> "LetterFilter":
        encoded = {k: None if data[k] is None else data[k].encode() for k in _BYTE_FIELDS}
        header = data["header"]
        return cls(
            **encoded,
            header=None if header is None else (header[0], header[1].encode()),
            since_ms=data["since_ms"],
            until_ms=data.get("until_ms"),
        )

    def _bytes(self) -> dict[str, bytes | None]:
        return {name: getattr(self, name) for name in _BYTE_FIELDS}


_BYTE_FIELDS = ("key", "reason", "contains")


@dataclass(frozen=True)
class Page:
    letters: list[KafkaMessage]
    next_offset: int | None  # where the next page starts; None at the end


class DeadLetters:
    """Thread-safe: web requests and tasks share one per queue."""

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        group = f"{config.tracker_group_id}__dlq-{uuid.uuid4().hex[:8]}"
        self._consumer = Consumer(
            consumer_config(
                config.bootstrap_servers, group, {"fetch.wait.max.ms": 5, **config.kafka_config}
            )
        )
        self._reader = OffsetReader(
            config.bootstrap_servers, config.dlq_topic, f"{group}-reader", config.kafka_config
        )
        self._producer = CheckedProducer(config.bootstrap_servers, config.kafka_config)

    def partitions(self) -> list[int]:
        return topic_partitions(self._consumer, self.config.dlq_topic)

    def page(
        self,
        partition: int,
        limit: int,
        start: int | None = None,
        match: LetterFilter = LetterFilter(),
    ) -> Page:
        """Up to ``limit`` letters of ``partition`` that ``match``, from
        ``start``, or from the first at or after ``match.since_ms`` (found with
        offsets_for_times, KIP-33), or from the beginning.

        Every letter before that seek is older than ``since_ms``, but not
        every one after it is newer: a letter keeps the timestamp of the
        copy it was (its producer's CreateTime), and messages reach the DLQ
        in the order they fail, not the order they were produced. So
        ``match`` checks ``since_ms`` per record too, on any Kafka."""
        topic = self.config.dlq_topic
        with self._lock:
            low, high = self._consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=10
            )
            offset = self._start(partition, start, match.since_ms, low)
            if offset is None:
                return Page([], None)
            return self._scan(partition, offset, high, limit, match)

    def get(self, partition: int, offset: int) -> KafkaMessage | None:
        """The letter at ``offset``, or None when there is none (outside the
        partition, or compacted or deleted away)."""
        with self._lock:
            low, high = self._consumer.get_watermark_offsets(
                TopicPartition(self.config.dlq_topic, partition), timeout=10
            )
            if not low <= offset < high:
                return None  # never wait for a record that is not there
            return self._reader.read(partition, [offset]).get(offset)

    def redrive(self, letters: Iterable[KafkaMessage], edit: Draft | None = None) -> None:
        """Back to the queue as fresh messages, delivery count reset;
        ``edit``: what to send instead of their key, value and headers."""
        send_again(self._producer, self.config.topic, letters, edit)

    def bounds(self, partition: int) -> tuple[int, int]:
        """The partition's low and high watermarks, to tell progress."""
        with self._lock:
            return self._consumer.get_watermark_offsets(
                TopicPartition(self.config.dlq_topic, partition), timeout=10
            )

    def close(self) -> None:
        with self._lock:
            self._consumer.close()
            self._reader.close()

    def _start(
        self, partition: int, start: int | None, since_ms: int | None, low: int
    ) -> int | None:
        if start is not None:
            return max(start, low)
        if since_ms is None:
            return low
        wanted = TopicPartition(self.config.dlq_topic, partition, since_ms)
        found = self._consumer.offsets_for_times([wanted], timeout=10)[0].offset
        return None if found < 0 else found  # none that late

    def _scan(
        self,
        partition: int,
        offset: int,
        high: int,
        limit: int,
        match: LetterFilter,
    ) -> Page:
        """Reads until the page is full, the budget spent, or the partition's
        end as the page began (``high``): letters written since are left to
        a later read."""
        tp = TopicPartition(self.config.dlq_topic, partition, offset)
        letters: list[KafkaMessage] = []
        with Stretch(self._consumer, tp, high, limit * SCAN_FACTOR) as stretch:
            for records in stretch:
                for record in records:
                    if match(record):
                        letters.append(record)
                        if len(letters) == limit:
                            after = record.offset() + 1
                            return Page(letters, None if after >= high else after)
        return Page(letters, None if stretch.reached_end else stretch.position)
