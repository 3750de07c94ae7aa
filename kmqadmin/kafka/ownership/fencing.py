"""Partitions whose transactional producer a newer owner fenced.

A per-partition transactional id means whoever is assigned the partition
next fences the previous owner with ``init_transactions``. The fenced one
must not re-initialise at once: that would fence the new owner back, and
the two would take turns until the old one's revoke arrives. So a fenced
partition is dropped and waits: normally the revoke comes within a
heartbeat or two; if the partition is still assigned after a session
timeout, something else fenced it (a hand-started process with the same
id), and the owner takes it back.
"""

import time
from collections.abc import Container

from confluent_kafka import Consumer, KafkaError, KafkaException

# A newer owner's init_transactions fenced the producer, or the group moved on
# (KIP-447: an offset commit from a stale generation is refused).
_OWNERSHIP_LOST = {
    KafkaError._FENCED,
    KafkaError.ILLEGAL_GENERATION,
    KafkaError.UNKNOWN_MEMBER_ID,
    KafkaError.FENCED_INSTANCE_ID,
    KafkaError.REBALANCE_IN_PROGRESS,
}


def is_fenced(exc: KafkaException) -> bool:
    """Whether ``exc`` says the partition has a newer owner."""
    return exc.args[0].code() in _OWNERSHIP_LOST


class FencedPartitions:
    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self._until: dict[int, float] = {}

    def add(self, partition: int) -> None:
        self._until.setdefault(partition, time.monotonic() + self.grace_s)

    def discard(self, partition: int) -> None:
        self._until.pop(partition, None)

    def _expired(self) -> list[int]:
        """Partitions whose grace has passed, forgotten as they are returned."""
        if not self._until:
            return []
        now = time.monotonic()
        done = [p for p, until in self._until.items() if until <= now]
        for p in done:
            del self._until[p]
        return done

    def revivable(self, consumer: Consumer, owned: Container[int]) -> list[int]:
        """Partitions whose grace has passed and that the group still assigns
        to ``consumer`` but that are not ``owned``: fenced by someone outside
        the group, so the owner takes them back."""
        expired = self._expired()
        if not expired:
            return []
        assigned = {tp.partition for tp in consumer.assignment()}
        return [p for p in expired if p in assigned and p not in owned]
