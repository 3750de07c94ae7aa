"""Firing: the due schedules of every owned partition in one transaction.

The transaction holds the target records and the tombstones of their
schedules, so a schedule fires once: a crash before the commit leaves
neither visible, and the next owner fires it again. It also commits each
fired partition's read position with the group's metadata: what fences an
owner the group has moved on from (kafka/ownership/fencing.py); no owner
reads from those offsets (each reads its partitions from the start).
"""

from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import Producer, TopicPartition

from kmqadmin.scheduler.partition import Armed, Key, PartitionState


@dataclass
class Firing:
    """One partition's share of a firing turn."""

    state: PartitionState
    entries: list[tuple[Key, Armed]]

    def produce(self, producer: Producer, schedules_topic: str) -> None:
        """Each target record and its schedule's tombstone, into the open transaction."""
        partition = self.state.partition
        for _, entry in self.entries:
            target = entry.target
            producer.produce(
                target.topic, key=target.key, value=target.value, headers=target.headers
            )
            producer.produce(schedules_topic, key=entry.key, value=None, partition=partition)

    def offset(self, schedules_topic: str) -> TopicPartition:
        return TopicPartition(schedules_topic, self.state.partition, self.state.next_offset)

    def fired(self) -> None:
        for key, _ in self.entries:
            self.state.armed.pop(key, None)

    def rearm(self) -> None:
        """The transaction was aborted: fire on the next turn."""
        for key, entry in self.entries:
            self.state.arm(key, entry)


def due(states: Iterable[PartitionState], now: int, budget: int) -> list[Firing]:
    """Up to ``budget`` schedules due at ``now`` on the caught-up partitions,
    the most overdue partition first. The budget keeps a turn's transaction
    well inside its timeout (transaction_timeout.py) after a backlog; the rest
    is due at once, so the next turn follows without a wait."""
    ready = [
        (first, state)
        for state in states
        if state.caught_up and (first := state.first_due()) is not None and first <= now
    ]
    ready.sort(key=lambda pair: pair[0])
    firings = []
    for _, state in ready:
        if budget <= 0:
            break
        if entries := state.take_due(now, budget):
            firings.append(Firing(state, entries))
            budget -= len(entries)
    return firings
