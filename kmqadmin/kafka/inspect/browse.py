"""Browsing one partition of any topic: a page of records from a seek, forward
or backward, through an assigned consumer that never joins a group or commits.

Every read is capped three ways (Caps): records returned, records scanned,
and seconds spent. A filter that matches little therefore costs a bounded
read, and the page says which cap stopped it and where to go on from; no
request ever reads a whole topic.

Backward reads the records *before* the start, newest first: windows read
forward, from the start down to the partition's low watermark, each one
whole before the next is taken, so the records a page returns are exactly
the matches just before its start (a window the time cap cut short is
dropped, not half used).
"""

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.offset_reader import ReadTimeout
from kmqadmin.kafka.admin.stretch import Stretch
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.client.record import Headers, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers

OLDEST, NEWEST = "oldest", "newest"
# Offsets a backward page reads forward at a time.
WINDOW = 1000
Match = Callable[[KafkaMessage], bool]


class BadSeek(ValueError):
    """A start that names nothing in the topic: the message says why."""


@dataclass(frozen=True)
class Caps:
    records: int = 100
    scanned: int = 10_000
    seconds: float = 5.0


@dataclass(frozen=True)
class Seek:
    """Where a page starts: an offset, the first record at or after a time
    (offsets_for_times), or an edge of the partition. Forward reads the
    records at and after it, backward the ones before it."""

    partition: int
    offset: int | None = None
    time_ms: int | None = None
    edge: str = OLDEST
    backward: bool = False


class Stop(StrEnum):
    END = "end"  # the partition's end (or, backward, its start) was reached
    RECORDS = "records"  # the page is full
    SCANNED = "scanned"  # the scan cap was spent
    TIME = "time"  # the time cap ran out (or the broker stalled)


@dataclass(frozen=True)
class BrowsedRecord:
    """A record as a page shows it; ``headers`` None: undecodable (a header
    name is not UTF-8), the rest still shown."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: Headers | None

    @classmethod
    def of(cls, record: KafkaMessage) -> "BrowsedRecord":
        try:
            found: Headers | None = read_headers(record) or []
        except UndecodableRecord:
            found = None
        return cls(
            record.topic() or "",
            record.partition() or 0,
            record.offset() or 0,
            record.timestamp()[1],
            record.key(),
            record.value(),
            found,
        )


@dataclass(frozen=True)
class Page:
    records: list[BrowsedRecord]  # reading order: oldest first forward, newest first backward
    start: int  # the offset the seek resolved to
    scanned: int
    stopped: Stop
    next_offset: int | None  # go on from here in the same direction; None: nothing more
    low: int
    high: int

    @property
    def capped(self) -> bool:
        """A cap, not the data, ended the read: there may be more to find."""
        return self.stopped in (Stop.SCANNED, Stop.TIME)


class TopicBrowser:
    """One cluster's browsing consumer; thread-safe (pages are read one at a
    time, each under the time cap)."""

    def __init__(self, bootstrap_servers: str, kafka_config: Mapping[str, Any]) -> None:
        self._lock = threading.Lock()
        config = {"fetch.wait.max.ms": 5, **kafka_config}
        group = f"kmqadmin-browser-{uuid.uuid4().hex[:8]}"  # assigned only: never joined
        self._consumer = Consumer(consumer_config(bootstrap_servers, group, config))

    def topics(self, timeout: float = 10.0) -> list[str]:
        metadata = self._consumer.list_topics(timeout=timeout)
        return sorted(name for name, meta in metadata.topics.items() if meta.error is None)

    def partitions(self, topic: str) -> list[int]:
        """TopicMissing when ``topic`` does not exist."""
        return topic_partitions(self._consumer, topic)

    def page(self, topic: str, seek: Seek, match: Match | None, caps: Caps = Caps()) -> Page:
        """Up to ``caps.records`` records of ``seek.partition`` that ``match``
        (None: every record). BadSeek for a partition the topic lacks."""
        if seek.partition not in (partitions := self.partitions(topic)):
            raise BadSeek(f"{topic} has partitions {partitions}, not {seek.partition}")
        with self._lock:
            low, high = self._consumer.get_watermark_offsets(
                TopicPartition(topic, seek.partition), timeout=10
            )
            start = self._start(topic, seek, low, high)
            read = _Read(self._consumer, topic, seek.partition, match, caps, low, high)
            return read.backward(start) if seek.backward else read.forward(start)

    def record(self, topic: str, partition: int, offset: int) -> BrowsedRecord | None:
        """The record at ``offset``; None when there is none (outside the
        partition, compacted, deleted, a transaction marker). ReadTimeout
        when the broker did not hand it over in time."""
        if partition not in (partitions := self.partitions(topic)):
            raise BadSeek(f"{topic} has partitions {partitions}, not {partition}")
        with self._lock:
            tp = TopicPartition(topic, partition, offset)
            low, high = self._consumer.get_watermark_offsets(tp, timeout=10)
            if not low <= offset < high:
                return None
            with Stretch(self._consumer, tp, offset + 1, budget=1, stall_s=5.0) as stretch:
                for records in stretch:
                    return BrowsedRecord.of(records[0]) if records else None
            if not stretch.reached_end:
                raise ReadTimeout(f"{topic}/{partition}/{offset} not read within 5 s", {})
            return None

    def close(self) -> None:
        with self._lock:
            self._consumer.close()

    def _start(self, topic: str, seek: Seek, low: int, high: int) -> int:
        if seek.offset is not None:
            return min(max(seek.offset, low), high)
        if seek.time_ms is not None:
            wanted = TopicPartition(topic, seek.partition, seek.time_ms)
            found = self._consumer.offsets_for_times([wanted], timeout=10)[0].offset
            return high if found < 0 else found  # none that late: the end
        return high if seek.edge == NEWEST else low


class _Read:
    """One page's read of one partition, with its caps' running counts."""

    def __init__(
        self,
        consumer: Consumer,
        topic: str,
        partition: int,
        match: Match | None,
        caps: Caps,
        low: int,
        high: int,
    ) -> None:
        self.consumer, self.topic, self.partition = consumer, topic, partition
        self.match, self.caps, self.low, self.high = match, caps, low, high
        self.deadline = time.monotonic() + caps.seconds
        self.scanned = 0

    def forward(self, start: int) -> Page:
        found: list[KafkaMessage] = []
        wanted, match = self.caps.records, self.match
        tp = TopicPartition(self.topic, self.partition, start)
        with self._stretch(tp, self.high, self.caps.scanned) as stretch:
            for records in stretch:
                for record in records:
                    self.scanned += 1
                    if match is None or match(record):
                        found.append(record)
                        if len(found) == wanted:
                            after = record.offset() + 1
                            more = after if after < self.high else None
                            return self._page(found, start, Stop.RECORDS, more)
                if self._late():
                    break
        if stretch.reached_end:
            return self._page(found, start, Stop.END, None)
        return self._page(found, start, self._cap(), stretch.position)

    def backward(self, start: int) -> Page:
        found: list[KafkaMessage] = []
        end = start
        while end > self.low:
            left = self.caps.scanned - self.scanned
            if left <= 0 or self._late():
                return self._page(found, start, self._cap(), end)
            first = max(self.low, end - min(WINDOW, left))
            window = self._window(first, end)
            if window is None:  # cut short: its matches are not known to be the last ones
                return self._page(found, start, Stop.TIME, end)
            need = self.caps.records - len(found)
            if len(window) >= need:
                taken = window[-need:]
                return self._page(found + taken[::-1], start, Stop.RECORDS, taken[0].offset())
            found += window[::-1]
            end = first
        return self._page(found, start, Stop.END, None)

    def _window(self, first: int, end: int) -> list[KafkaMessage] | None:
        """The matches in [first, end), oldest first; None if not read whole."""
        window: list[KafkaMessage] = []
        match = self.match
        tp = TopicPartition(self.topic, self.partition, first)
        with self._stretch(tp, end, end - first) as stretch:
            for records in stretch:
                self.scanned += len(records)
                window += records if match is None else [r for r in records if match(r)]
                if self._late():
                    break
        return window if stretch.reached_end else None

    def _stretch(self, tp: TopicPartition, end: int, budget: int) -> Stretch:
        left = max(0.0, self.deadline - time.monotonic())
        return Stretch(self.consumer, tp, end, budget=budget, stall_s=left)

    def _late(self) -> bool:
        return time.monotonic() >= self.deadline

    def _cap(self) -> Stop:
        return Stop.SCANNED if self.scanned >= self.caps.scanned else Stop.TIME

    def _page(
        self, found: list[KafkaMessage], start: int, stopped: Stop, next_offset: int | None
    ) -> Page:
        records = [BrowsedRecord.of(record) for record in found]
        return Page(records, start, self.scanned, stopped, next_offset, self.low, self.high)
