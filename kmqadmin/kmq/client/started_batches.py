"""StartedBatches: poll batches handed out before their start markers were acknowledged.

A compact-format client hands a batch out as soon as its start ranges are
on their way, and commits the batch's queue offsets only once the broker
has acknowledged every one of them. So nothing is ever committed past a
message the tracker has not heard of: a worker that dies before its start
markers are written leaves the offsets uncommitted, and whoever reads the
partition next delivers the messages again. Waiting for the broker before
handing out (kmq's step 3) would cost a round trip per poll; with a batch
of a few start records, a delivery report per record costs nothing.

Per partition the batches are acknowledged in order (the producer is
idempotent), so the oldest batches whose every start is written give the
offset to commit. A start that fails means the partition must be read again
from the failed batch's first offset.
"""

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from confluent_kafka import KafkaError
from confluent_kafka import Message as KafkaMessage


@dataclass(eq=False, slots=True)
class _Part:
    """One partition's share of a poll batch."""

    first: int  # the first offset handed out
    next_offset: int  # to commit once every start record is written
    unwritten: int  # start records not acknowledged yet
    failed: str = ""


@dataclass(frozen=True, slots=True)
class Ready:
    commits: dict[int, int]  # partition -> offset to commit
    rewinds: dict[int, tuple[int, str]]  # partition -> (offset to read again from, why)


class StartedBatches:
    def __init__(self) -> None:
        self._parts: dict[int, deque[_Part]] = {}

    def add(
        self, partition: int, first: int, next_offset: int, records: int
    ) -> Callable[[KafkaError | None, KafkaMessage], None]:
        """Registers a batch's part; returns the delivery report callback of
        each of its ``records`` start records."""
        part = _Part(first, next_offset, records)
        self._parts.setdefault(partition, deque()).append(part)

        def delivered(err: KafkaError | None, _msg: KafkaMessage) -> None:
            part.unwritten -= 1
            if err is not None and not part.failed:
                part.failed = err.str()

        return delivered

    def ready(self) -> Ready:
        """What to commit, and what to read again, from the reports served so far."""
        commits: dict[int, int] = {}
        rewinds: dict[int, tuple[int, str]] = {}
        for partition, parts in self._parts.items():
            while parts and parts[0].unwritten == 0:
                part = parts.popleft()
                if part.failed:
                    rewinds[partition] = (part.first, part.failed)
                    parts.clear()  # read again from there: their starts are written again
                    break
                commits[partition] = part.next_offset
        return Ready(commits, rewinds)

    def pending(self) -> int:
        """Batch parts whose start records are not all acknowledged yet."""
        return sum(len(parts) for parts in self._parts.values())

    def forget(self, partitions: Iterable[int]) -> None:
        """Partitions this client no longer reads: whoever reads them next
        delivers again what was not committed."""
        for partition in partitions:
            self._parts.pop(partition, None)
