"""Lifecycle: one message's story, found through its kmq-id.

Every copy of a message lies in the queue partition of its first copy, at a
higher offset, with the first copy's kmq-id; its markers lie in the markers
partition of the same number (a share queue has none: its story is its copies
and letters); its dead letter in DLQ partition
``p % dlq_partitions``. So the story is read from three seeks, each a
capped window: from the first copy on in the queue, and from the first
copy's time on (offsets_for_times, KIP-33) in the markers and the DLQ. A
window that ends before its partition does makes the story ``complete=False``,
and the page says so rather than reading on.
"""

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.stretch import Stretch
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.clock import utc_text
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.client.record import UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import headers, markers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.markers import MarkerType
from kmqadmin.kmq.readers.twin_letters import TwinLetters

# Records read at most per window: a request's read stays bounded.
QUEUE_WINDOW = 20_000
MARKERS_WINDOW = 100_000
DLQ_WINDOW = 20_000

# The compact format's range markers, which a copy may lie inside.
_RANGES = (MarkerType.START_RANGE, MarkerType.END_RANGE)
_MARKER_EVENT = {
    MarkerType.START: "started",
    MarkerType.REDELIVER_NOW: "retry asked",
    MarkerType.RETURN: "returned unseen",
    MarkerType.EXTEND: "extended",
    MarkerType.REJECT: "reject asked",
}


_FINAL = ("acked", "dead-lettered")


@dataclass(frozen=True, slots=True)
class Event:
    at_ms: int
    kind: str  # produced, redelivered, started, acked, extended, dead-lettered...
    offset: int  # of the copy it concerns (of the letter for dead-lettered)
    detail: str = ""


@dataclass
class Lifecycle:
    message_id: str
    first: KafkaMessage  # the first copy: payload, key and headers
    copies: list[int]  # offsets of every copy, first included
    events: list[Event] = field(default_factory=list)
    letters: list[KafkaMessage] = field(default_factory=list)
    complete: bool = True
    markers: bool = True  # False: a share queue, whose broker keeps no per-record history

    @property
    def first_headers(self) -> headers.Headers | None:
        """The first copy's headers; None when they do not decode (the page
        says so and shows its key and value in hex)."""
        try:
            return read_headers(self.first) or []
        except UndecodableRecord:
            return None

    @property
    def state(self) -> str:
        """How the last copy ended, if it did."""
        last = self.copies[-1]
        ends = [e.kind for e in self.events if e.offset == last and e.kind in _FINAL]
        if ends:
            return ends[-1]
        return "in flight or waiting" if self.markers else "acked, in flight or waiting"


class LifecycleFinder:
    """Thread-safe: web requests share one per queue."""

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        group = f"{config.tracker_group_id}__lifecycle-{uuid.uuid4().hex[:8]}"
        self._consumer = Consumer(
            consumer_config(
                config.bootstrap_servers, group, {"fetch.wait.max.ms": 5, **config.kafka_config}
            )
        )

    def find(self, message_id: str) -> Lifecycle | None:
        """The story of ``message_id``, or None if it names no record of this
        queue (a malformed id, another topic, or a first copy gone)."""
        parsed = headers.parse_message_id(message_id)
        if parsed is None or parsed[0] != self.config.topic:
            return None
        _, partition, offset = parsed
        with self._lock:
            return self._find(message_id, partition, offset)

    def close(self) -> None:
        with self._lock:
            self._consumer.close()

    def _find(self, message_id: str, partition: int, offset: int) -> Lifecycle | None:
        config, wanted = self.config, message_id.encode()
        if partition not in topic_partitions(self._consumer, config.topic):
            return None
        low, high = self._consumer.get_watermark_offsets(
            TopicPartition(config.topic, partition), timeout=10
        )
        if not low <= offset < high:
            # Never seek where no record is: an out-of-range fetch starts an
            # offset reset, and closing the consumer while one is under way
            # was seen to hang librdkafka's close().
            return None
        found: list[KafkaMessage] = []

        def is_copy(record: KafkaMessage) -> bool:
            if record.offset() == offset:
                return True
            return headers.find_in(record, headers.MESSAGE_ID) == wanted

        complete = self._window(config.topic, partition, offset, QUEUE_WINDOW, is_copy, found)
        if not found or found[0].offset() != offset:
            return None
        story = Lifecycle(message_id, found[0], [r.offset() for r in found], complete=complete)
        since = found[0].timestamp()[1]
        story.letters = self._read_letters(story, partition, since, wanted)
        if config.backend == "share":
            story.markers = False
            story.events = _share_events(found, story.letters)
        else:
            marks = self._read_markers(story, partition, since)
            story.events = _events(found, marks, story.letters)
        return story

    def _read_markers(self, story: Lifecycle, partition: int, since_ms: int) -> list[KafkaMessage]:
        # Compared as bytes: no decode per marker, and a malformed key is
        # simply not one of them. A compact range is decoded to see whether
        # a copy lies inside it.
        keys = {markers.encode_key(partition, offset) for offset in story.copies}
        found: list[KafkaMessage] = []

        def concerns(record: KafkaMessage) -> bool:
            if record.key() in keys:
                return True
            value = record.value()
            if not value or value[0] not in _RANGES:
                return False
            try:
                marker = markers.decode(record.key(), value, 0)
            except markers.MarkerError:
                return False
            return any(marker.first <= copy <= marker.last for copy in story.copies)

        topic = self.config.markers_topic
        start = self._offset_at(topic, partition, since_ms)
        story.complete &= self._window(topic, partition, start, MARKERS_WINDOW, concerns, found)
        return found

    def _read_letters(
        self, story: Lifecycle, partition: int, since_ms: int, wanted: bytes
    ) -> list[KafkaMessage]:
        topic = self.config.dlq_topic
        dlq_partition = partition % len(topic_partitions(self._consumer, topic))
        found: list[KafkaMessage] = []

        def is_letter(record: KafkaMessage) -> bool:
            return headers.find_in(record, headers.MESSAGE_ID) == wanted

        start = self._offset_at(topic, dlq_partition, since_ms)
        story.complete &= self._window(topic, dlq_partition, start, DLQ_WINDOW, is_letter, found)
        return found

    def _offset_at(self, topic: str, partition: int, since_ms: int) -> int:
        """The first offset at or after ``since_ms``, or the partition's end
        when no record is that late (nothing there concerns the story)."""
        tp = TopicPartition(topic, partition, since_ms)
        found = self._consumer.offsets_for_times([tp], timeout=10)[0].offset
        if found >= 0:
            return found
        return self._consumer.get_watermark_offsets(tp, timeout=10)[1]

    def _window(
        self,
        topic: str,
        partition: int,
        start: int,
        budget: int,
        keep: Callable[[KafkaMessage], bool],
        found: list[KafkaMessage],
    ) -> bool:
        """Reads up to ``budget`` records from ``start``; True if it reached the
        partition's end as the read began."""
        tp = TopicPartition(topic, partition, start)
        high = self._consumer.get_watermark_offsets(tp, timeout=10)[1]
        with Stretch(self._consumer, tp, high, budget, batch=1000) as stretch:
            for records in stretch:
                found.extend(r for r in records if keep(r))
        return stretch.reached_end


def _events(
    copies: list[KafkaMessage], marks: list[KafkaMessage], letters: list[KafkaMessage]
) -> list[Event]:
    """The story in time order: the copies' events, then the markers'. An end
    marker is a redelivery's when a redelivered copy follows, a move to the
    DLQ when a letter is left to account for, else an ack."""
    events, following = _copy_events(copies), {}
    for n, record in enumerate(copies[1:], 1):
        redelivered = headers.find_in(record, headers.REDELIVERY_COUNT) is not None
        following[copies[n - 1].offset()] = (record.offset(), redelivered)
    reasons = [
        (headers.find_in(letter, headers.DLQ_REASON) or b"").decode(errors="replace")
        for letter in letters
    ]
    offsets = [record.offset() for record in copies]
    for record in sorted(marks, key=lambda r: r.offset()):
        at = record.timestamp()[1]
        try:
            marker = markers.decode(record.key(), record.value(), at)
        except markers.MarkerError:
            continue
        for copy in (o for o in offsets if marker.first <= o <= marker.last):
            events.append(_marker_event(marker, at, copy, following, reasons))
    events.sort(key=lambda e: (e.at_ms, e.offset))
    return events


def _copy_events(copies: list[KafkaMessage]) -> list[Event]:
    """A copy with a delivery count is a redelivery; one without was sent
    again (redriven or replayed)."""
    events = []
    for n, record in enumerate(copies):
        redelivered = headers.find_in(record, headers.REDELIVERY_COUNT) is not None
        kind = "produced" if n == 0 else "redelivered" if redelivered else "sent again"
        stamp = "log append time" if record.timestamp()[0] == 2 else "create time"
        events.append(Event(record.timestamp()[1], kind, record.offset(), stamp))
    return events


def _marker_event(
    marker: markers.Marker,
    at: int,
    copy: int,
    following: dict[int, tuple[int, bool]],
    reasons: list[str],
) -> Event:
    if marker.kind is not MarkerType.END:
        detail = marker.reason.decode(errors="replace") if marker.kind is MarkerType.REJECT else ""
        if marker.deadline:
            detail = f"deadline {utc_text(marker.deadline)}"
        return Event(at, _MARKER_EVENT[marker.kind], copy, detail)
    if copy in following and following[copy][1]:
        return Event(at, "ended by redelivery", copy, f"copy {following[copy][0]}")
    if reasons:
        return Event(at, "dead-lettered", copy, reasons.pop(0))
    return Event(at, "acked", copy)


def _share_events(copies: list[KafkaMessage], letters: list[KafkaMessage]) -> list[Event]:
    """A share queue's story: its copies and its letters, no markers. A
    letter keeps its record's timestamp, which tells the copy it is of (the
    last copy when none matches); a twin letter (the same record written
    twice) says so."""
    events, twins = _copy_events(copies), TwinLetters()
    copy_at = {record.timestamp()[1]: record.offset() for record in copies}
    for letter in letters:
        at = letter.timestamp()[1]
        detail = (headers.find_in(letter, headers.DLQ_REASON) or b"").decode(errors="replace")
        if (twin := twins.twin_of(letter)) is not None:
            detail = f"{detail}; duplicate of letter {letter.partition()}/{twin}"
        events.append(Event(at, "dead-lettered", copy_at.get(at, copies[-1].offset()), detail))
    events.sort(key=lambda e: (e.at_ms, e.offset))
    return events
