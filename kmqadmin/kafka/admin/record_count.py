"""RecordCount: how many records a stretch of a partition holds, read once.

On a topic written in transactions an offset is not a record: every
transaction leaves a commit or abort marker in each partition it wrote, and
an aborted transaction's records keep their offsets but are never handed to
a read_committed reader. Offsets alone cannot tell them apart (a tracker
that dead-letters one message per transaction doubles the DLQ's size), and
Kafka keeps no count, so the records are read: each one once, however often
the count is asked for. A partition's reading resumes where the last one
stopped, and what falls behind the stretch's start (the workers' commits,
retention) is dropped, so memory holds the offsets of the records counted
(8 bytes each), and a live gauge costs a read of what arrived since.
"""

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from kmqadmin.kafka.admin.stretch import Stretch

# A count gives up after this long without progress (the broker away).
STALL_S = 5.0


@dataclass
class _Read:
    """One partition's reading: the offsets of the records in [start, position)."""

    start: int
    position: int
    offsets: array = field(default_factory=lambda: array("q"))


class RecordCount:
    """Counts for one topic, read with ``consumer`` (read_committed, as
    consumer_config builds it), which it assigns while reading; not
    thread-safe (QueueGauges holds a lock around it)."""

    def __init__(self, consumer: Consumer, topic: str, stall_s: float = STALL_S) -> None:
        self._consumer, self.topic, self.stall_s = consumer, topic, stall_s
        self._reads: dict[int, _Read] = {}

    def between(self, stretches: dict[int, tuple[int, int]], stall_s: float | None = None) -> int:
        """The committed records at offsets [start, end) of each partition,
        summed, for ``{partition: (start, end)}``; ``end`` at most the last
        stable offset, so every record below it is decided. Raises
        KafkaException when a reading makes no progress for ``stall_s``
        (default: the counter's)."""
        stall_s = self.stall_s if stall_s is None else stall_s
        return sum(self._partition(p, start, end, stall_s) for p, (start, end) in stretches.items())

    def _partition(self, partition: int, start: int, end: int, stall_s: float) -> int:
        read = self._reads.get(partition)
        if read is None or not read.start <= start <= read.position <= end:
            # New; moved back (an offset reset, a topic recreated); or the
            # start passed all that was read: (re)start the reading there.
            read = self._reads[partition] = _Read(start, start)
        if read.position < end:
            self._read_on(partition, read, end, stall_s)
        del read.offsets[: bisect_left(read.offsets, start)]
        read.start = start
        return len(read.offsets)

    def _read_on(self, partition: int, read: _Read, end: int, stall_s: float) -> None:
        begin = TopicPartition(self.topic, partition, read.position)
        with Stretch(self._consumer, begin, end, batch=5000, stall_s=stall_s) as stretch:
            for records in stretch:
                read.offsets.extend(r.offset() for r in records)
        # Records past ``end`` were fetched but not handed out: read them next time.
        read.position = min(stretch.position, end)
        if not stretch.reached_end:
            raise KafkaException(
                KafkaError(
                    KafkaError._TIMED_OUT,
                    f"counting the records of {self.topic}/{partition}: no progress in "
                    f"{stall_s:.1f} s at offset {read.position} of {end}",
                )
            )
