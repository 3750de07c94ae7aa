"""Firing: the due schedules of one partition in one transaction.

The transaction holds the target records and the tombstones of their
schedules, so a schedule fires once: a crash before the commit leaves
neither visible, and the next owner (which fences this one) fires it again.
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from confluent_kafka import KafkaException

from kmqadmin.kafka.client.clock import now_ms

from .lateness import Lateness
from .partition import Armed, Key, PartitionState

log = logging.getLogger(__name__)


@dataclass
class Firing:
    """One partition's share of a firing turn: one transaction."""

    state: PartitionState
    entries: list[tuple[Key, Armed]]

    def produce(self, schedules_topic: str) -> None:
        """Opens the partition's transaction and produces each target record and
        tombstone into it."""
        state = self.state
        producer = state.producer
        producer.begin_transaction()
        for _, entry in self.entries:
            target = entry.target
            producer.produce(
                target.topic, key=target.key, value=target.value, headers=target.headers
            )
            producer.produce(schedules_topic, key=entry.key, value=None, partition=state.partition)

    def commit(self) -> None:
        self.state.producer.commit_transaction(30)
        for key, _ in self.entries:
            self.state.armed.pop(key, None)

    def retry(self, exc: KafkaException) -> bool:
        """Aborts, and arms the entries again for the next turn; False when the
        producer cannot go on (a fatal error, or the abort failed)."""
        state, error = self.state, exc.args[0]
        if error.fatal():
            return False
        try:
            state.producer.abort_transaction(10)
        except KafkaException:
            return False
        log.warning("firing on partition %d aborted (%s); retrying", state.partition, error)
        for key, entry in self.entries:
            state.arm(key, entry)
        return True


Recover = Callable[[Firing, KafkaException], None]


def fire_due(
    states: Iterable[PartitionState],
    schedules_topic: str,
    now: int,
    recover: Recover,
    lateness: Lateness,
) -> int:
    """Fires what is due on every partition: one transaction per partition;
    returns how many fired, and adds to ``lateness`` how late each fired
    (measured at its commit, when it became visible). All are produced
    before the first commit, so their records travel together and each commit mostly waits for its
    end-transaction round trip. (Committing on threads measured slower: the
    broker serialises.) A firing that fails goes to ``recover`` at once."""
    fired, firings = 0, []
    for state in states:
        if state.caught_up and (entries := state.take_due(now)):
            firing = Firing(state, entries)
            try:
                firing.produce(schedules_topic)
            except KafkaException as exc:
                recover(firing, exc)
                continue
            firings.append(firing)
    for firing in firings:
        try:
            firing.commit()
        except KafkaException as exc:
            recover(firing, exc)
            continue
        committed = now_ms()
        for _, entry in firing.entries:
            lateness.observe(committed - entry.deadline)
        fired += len(firing.entries)
    return fired
