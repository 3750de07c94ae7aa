"""What the markers of one markers partition say: pure state, no Kafka client.

A TrackedPartition is the open set (which messages are out, and until when),
the reasons of the rejected ones, and the offsets that make the commit
point. It applies markers as decoded records and is tested without a broker;
the tracker (tracker.py) owns the Kafka clients.

``apply_batch`` is the tracker's hot loop. kmq's start and end markers,
nearly all of a kmq-format queue's traffic, take an inlined path that builds
no object per marker; every other record (a compact queue's ranges, garbage)
goes through the codec in markers.py. The
two must agree on every (key, value, timestamp): tests/kmq/test_markers.py
proves that with a property test.
"""

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from confluent_kafka import Consumer, KafkaError, TopicPartition

from kmqadmin.kmq import markers
from kmqadmin.kmq.markers import (
    ABSOLUTE_FROM,
    DEADLINE,
    DEADLINE_MAX,
    DEADLINE_MIN,
    KEY,
    MarkerType,
)
from kmqadmin.kmq.tracking.open_set import OpenSet

log = logging.getLogger(__name__)


class Record(Protocol):
    """What the loop reads of a consumed Kafka message (a test passes its own)."""

    def error(self) -> KafkaError | None: ...
    def partition(self) -> int: ...
    def offset(self) -> int: ...
    def key(self) -> bytes | None: ...
    def value(self) -> bytes | None: ...
    def timestamp(self) -> tuple[int, int]: ...


@dataclass(eq=False, kw_only=True)
class TrackedPartition:
    partition: int
    next_offset: int = 0  # next markers offset to read
    open: OpenSet = field(default_factory=OpenSet)
    rejected: dict[int, str] = field(default_factory=dict)  # queue offset -> reason
    returned: set[int] = field(default_factory=set)  # queue offsets no one saw: count kept
    last_read: Record | None = None  # the newest marker read, for its timestamp
    # Where the consumer last reported reaching the end of what it may read
    # (PARTITION_EOF: the last stable offset, read_committed); -1 never.
    end_read: int = -1

    def apply(self, key: bytes | None, value: bytes | None, timestamp: int, offset: int) -> int:
        """Decodes and applies the marker at markers ``offset``; returns the
        deliveries an end marker closed. MarkerError when the bytes are not
        one of this partition's markers."""
        marker = markers.decode(key, value, timestamp)
        if marker.partition != self.partition:
            raise markers.MarkerError(
                f"marker for queue partition {marker.partition} on markers partition "
                f"{self.partition}"
            )
        return self.apply_marker(marker, offset)

    def apply_marker(self, marker: markers.Marker, offset: int) -> int:
        kind, first = marker.kind, marker.first
        if kind is MarkerType.START:
            self.open.start(first, marker.last, marker.deadline, offset)
        elif kind is MarkerType.END:
            if self.rejected:
                for rejected in [o for o in self.rejected if first <= o <= marker.last]:
                    del self.rejected[rejected]
            if self.returned:
                self.returned = {o for o in self.returned if not first <= o <= marker.last}
            return self.open.end(first, marker.last)
        elif kind is MarkerType.EXTEND:
            self.open.reschedule(first, marker.deadline)
        elif kind is MarkerType.REDELIVER_NOW:
            self.open.reschedule(first, 0)
        elif kind is MarkerType.RETURN:
            if self.open.reschedule(first, 0):
                self.returned.add(first)
        elif self.open.reschedule(first, 0):  # REJECT: due now, to the DLQ
            self.rejected[first] = marker.reason.decode(errors="replace")
        return 0

    def commit_offset(self) -> int:
        """The markers offset to commit: the oldest open start marker, or the
        next to read when none is open."""
        return self.open.commit_offset(self.next_offset)

    def known_until(
        self, consumer: Consumer, markers_topic: str, now: int, held_since: int | None = None
    ) -> int:
        """The time up to which this partition's markers are known to be read:
        now when ``consumer`` has read to the end, else the timestamp of the
        newest marker read. A message due after that may have its end marker
        in the part not read yet, so a tracker that lags behind a burst of
        markers redelivers only what it knows was not acked in time.

        ``held_since``: when the tracker began writing the oldest of its own
        transactions on this partition that is not decided yet. Such a
        transaction holds the partition's last stable offset, so a consumer
        that has read up to it is short of the high watermark although it
        lags behind nothing written before that transaction: it knows the
        markers up to then. (Else, in a burst of redeliveries, where one
        transaction is nearly always open, a partition quiet before the
        burst would be known only up to its last marker, seconds old, and
        its due messages would wait for each commit.) What this cannot see
        risks a copy of a message acked meanwhile, never a loss: another
        producer's transaction holding the offset (a zombie tracker's), or
        an end reported before the transaction holding it was decided and
        read after (a message acked within a commit's time of its deadline,
        as one whose ack is still on its way at its deadline)."""
        last = self.last_read
        if last is None:
            return now
        tp = TopicPartition(markers_topic, self.partition)
        ends = consumer.get_watermark_offsets(tp, cached=True)
        # The position, not the next marker's offset: a transaction's commit
        # marker takes an offset too, and is never handed out as a record.
        position = consumer.position([tp])[0].offset
        if ends is None or ends[1] < 0 or position < 0 or position >= ends[1]:
            return now
        if held_since is not None and position == self.end_read:
            return min(now, held_since)
        return min(now, last.timestamp()[1])

    def commit_point(self, markers_topic: str) -> TopicPartition:
        """``commit_offset`` with the newest closed offsets as its metadata:
        together, what a restart reads the partition from (start_points.py)."""
        offset = self.commit_offset()
        return TopicPartition(markers_topic, self.partition, offset, self.open.closed.to_metadata())


# Called with the partition, the marker's offset and why it was skipped.
OnSkip = Callable[[TrackedPartition, int, markers.MarkerError], None]


def apply_batch(
    states: Mapping[int, TrackedPartition], records: Iterable[Record], on_skip: OnSkip
) -> int:
    """The hot loop: kmq's start and end markers take a path with no
    decoding objects; everything else, compact ranges and garbage included,
    goes through the codec (a range stands for a whole batch, so its cost
    is spread over hundreds of messages). Returns the acks read, for the
    tracker's counts: deliveries an end marker closed, so not the tracker's
    own barriers (queue offset -1) nor the end markers it writes for what it
    redelivered or dead-lettered (pop_due closed those)."""
    unpack_key, unpack_deadline = KEY.unpack, DEADLINE.unpack_from
    acked = 0
    for record in records:
        if (error := record.error()) is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                log.warning("markers consumer: %s", error)
            elif (read := states.get(record.partition())) is not None:
                read.end_read = record.offset()
            continue
        state = states.get(record.partition())
        if state is None:
            continue
        offset = record.offset()
        state.next_offset = offset + 1
        state.last_read = record
        key, value = record.key(), record.value()
        if key is not None and len(key) == 12 and value:
            partition, queue_offset = unpack_key(key)
            if partition == state.partition:
                if value[0] == 1 and len(value) == 9 and queue_offset >= 0:
                    deadline = unpack_deadline(value, 1)[0]
                    if deadline < ABSOLUTE_FROM:  # kmq's timeout; inlined start_deadline
                        deadline += record.timestamp()[1]
                    if DEADLINE_MIN <= deadline <= DEADLINE_MAX:  # else the codec says why
                        state.open.start(queue_offset, queue_offset, deadline, offset)
                        continue
                if value == b"\x00":
                    acked += state.open.end(queue_offset, queue_offset)
                    if state.rejected:
                        state.rejected.pop(queue_offset, None)
                    if state.returned:
                        state.returned.discard(queue_offset)
                    continue
        try:
            acked += state.apply(key, value, record.timestamp()[1], offset)
        except markers.MarkerError as exc:
            on_skip(state, offset, exc)
    return acked
