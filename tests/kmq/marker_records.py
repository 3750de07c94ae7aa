"""A stand-in for a consumed markers record, for the tracker's pure state."""

from dataclasses import dataclass

from confluent_kafka import KafkaError

from kmqadmin.kmq.tracked_partition import TrackedPartition


@dataclass
class FakeRecord:
    partition_: int
    offset_: int
    key_: bytes | None
    value_: bytes | None
    timestamp_: int = 0
    error_: KafkaError | None = None

    def error(self) -> KafkaError | None:
        return self.error_

    def partition(self) -> int:
        return self.partition_

    def offset(self) -> int:
        return self.offset_

    def key(self) -> bytes | None:
        return self.key_

    def value(self) -> bytes | None:
        return self.value_

    def timestamp(self) -> tuple[int, int]:
        return 1, self.timestamp_


def snapshot(state: TrackedPartition) -> tuple:
    """Everything a tracker can see of the state; empties its open set."""
    seen = (state.next_offset, len(state.open), state.commit_offset(), dict(state.rejected))
    return seen, drain(state)


def drain(state: TrackedPartition) -> list[tuple[int, list[int], int]]:
    """Each deadline held, earliest first, with the queue offsets due at it
    and the commit point once they are gone."""
    due = []
    while (deadline := state.open.next_deadline()) is not None:
        due.append((deadline, state.open.pop_due(deadline, 10**6), state.commit_offset()))
    return due
