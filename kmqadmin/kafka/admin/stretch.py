"""A stretch of one partition, offsets [start, end) (OffsetRange), and reading
it: from a seek up to an end the broker gave.

The end is what ``get_watermark_offsets`` answers a ``read_committed``
consumer (every consumer consumer_config builds): the last stable offset,
below which every record is decided and can be read. Transaction markers
and aborted records take offsets but are never handed out, so progress is
the consumer's position, which librdkafka moves past them, never a count of
records.
"""

import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

# The longest one consume waits: a stretch that ends in transaction markers
# holds fewer records than offsets, so "enough records" may never come.
WAIT_S = 0.05


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """Offsets [start, end) of one partition: what a replay sends again, or
    one Spark input partition of the pipeline's source."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)


class Stretch:
    """Offsets from ``start.offset`` below ``end`` of one partition, read
    with ``consumer``, which it assigns on entry and unassigns on exit.

    Iterating yields the records of each fetch; ``position`` is where the
    read got to. It hands out at most ``budget`` records in all (None: no
    cap) and never asks for more than the stretch can hold, so a capped read
    consumes no more than its cap. It ends at ``end``, when the budget is
    spent, or after ``stall_s`` without progress (the broker away):
    ``reached_end`` tells them apart."""

    def __init__(
        self,
        consumer: Consumer,
        start: TopicPartition,
        end: int,
        budget: int | None = None,
        batch: int = 500,
        stall_s: float = 10.0,
    ) -> None:
        self._consumer, self._start = consumer, start
        self.end, self.budget, self.batch, self.stall_s = end, budget, batch, stall_s
        self.position = start.offset

    @property
    def reached_end(self) -> bool:
        return self.position >= self.end

    def __enter__(self) -> "Stretch":
        self._consumer.assign([self._start])
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._consumer.unassign()

    def __iter__(self) -> Iterator[list[KafkaMessage]]:
        left = self.budget
        deadline = time.monotonic() + self.stall_s
        while self.position < self.end and (left is None or left > 0):
            if time.monotonic() > deadline:
                return
            wanted = min(self.batch, self.end - self.position, self.batch if left is None else left)
            records = [r for r in self._consumer.consume(wanted, WAIT_S) if r.error() is None]
            if left is not None:
                left -= len(records)
            # The position counts the markers a fetch skipped; negative before the first.
            reached = self._consumer.position([self._start])[0].offset
            if records:
                reached = max(reached, records[-1].offset() + 1)
            if reached > self.position:
                self.position, deadline = reached, time.monotonic() + self.stall_s
                yield [r for r in records if r.offset() < self.end]
