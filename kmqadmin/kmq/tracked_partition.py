"""What the markers of one markers partition say: pure state, no Kafka client.

A TrackedPartition is the open set (which messages are out, and until when),
the reasons of the rejected ones, and the offsets that make the commit
point. It applies markers as decoded records and is tested without a broker;
the tracker (tracker.py) owns the Kafka clients.

``apply_batch`` is the tracker's hot loop. Start and end markers, nearly all
of the traffic, take an inlined path that builds no object per marker; every
other record, garbage included, goes through the codec in markers.py. The
two must agree on every (key, value, timestamp): tests/kmq/test_markers.py
proves that with a property test.
"""

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from confluent_kafka import KafkaError

from . import markers
from .markers import ABSOLUTE_FROM, DEADLINE, DEADLINE_MAX, DEADLINE_MIN, KEY, MarkerType
from .open_set import OpenSet

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
    committed: int = -1  # the markers offset last committed
    last_read: Record | None = None  # the newest marker read, for its timestamp

    def apply(self, key: bytes | None, value: bytes | None, timestamp: int, offset: int) -> None:
        """Decodes and applies the marker at markers ``offset``; MarkerError
        when the bytes are not one of this partition's markers."""
        queue_partition, queue_offset = markers.decode_key(key)
        kind, deadline, extra = markers.decode_value(value)
        if kind is MarkerType.START:
            deadline = markers.start_deadline(deadline, timestamp)
        if queue_partition != self.partition:
            raise markers.MarkerError(
                f"marker for queue partition {queue_partition} on markers partition "
                f"{self.partition}"
            )
        if kind is MarkerType.START and queue_offset < 0:
            # No record sits there: once due, its read-back could never succeed.
            raise markers.MarkerError(f"START for queue offset {queue_offset}, below any record")
        self.apply_marker(kind, queue_offset, deadline, extra, offset)

    def apply_marker(
        self, kind: MarkerType, queue_offset: int, deadline: int, extra: bytes, offset: int
    ) -> None:
        if kind is MarkerType.START:
            self.open.start(queue_offset, deadline, offset)
        elif kind is MarkerType.END:
            self.open.end(queue_offset)
            self.rejected.pop(queue_offset, None)
        elif kind is MarkerType.EXTEND:
            self.open.reschedule(queue_offset, deadline)
        elif kind is MarkerType.REDELIVER_NOW:
            self.open.reschedule(queue_offset, 0)
        elif self.open.reschedule(queue_offset, 0):  # REJECT: due now, to the DLQ
            self.rejected[queue_offset] = extra.decode(errors="replace")

    def commit_offset(self) -> int:
        """The markers offset to commit: the oldest open start marker, or the
        next to read when none is open."""
        return self.open.commit_offset(self.next_offset)


# Called with the partition, the marker's offset and why it was skipped.
OnSkip = Callable[[TrackedPartition, int, markers.MarkerError], None]


def apply_batch(
    states: Mapping[int, TrackedPartition], records: Iterable[Record], on_skip: OnSkip
) -> int:
    """The hot loop: start and end markers take a path with no decoding
    objects; everything else, garbage included, goes through the codec.
    Returns the acks read, for the tracker's counts: end markers that close
    an open delivery, so not the tracker's own barriers (queue offset -1)
    nor the end markers it writes for what it redelivered or dead-lettered
    (pop_due closed those). Only the inlined path applies an end marker
    (the codec's is one it refuses)."""
    unpack_key, unpack_deadline = KEY.unpack, DEADLINE.unpack_from
    acked = 0
    for record in records:
        if (error := record.error()) is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                log.warning("markers consumer: %s", error)
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
                        state.open.start(queue_offset, deadline, offset)
                        continue
                if value == b"\x00":
                    if state.open.end(queue_offset):
                        acked += 1
                    if state.rejected:
                        state.rejected.pop(queue_offset, None)
                    continue
        try:
            state.apply(key, value, record.timestamp()[1], offset)
        except markers.MarkerError as exc:
            on_skip(state, offset, exc)
    return acked
