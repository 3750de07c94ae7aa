"""The skeleton of a long-running partition owner (tracker, scheduler).

An owner reads a topic through a consumer group that shares its partitions
out, and acts on each partition it is assigned with a transactional producer
of its own whose id is derived from the partition, so whichever process owns
the partition next fences the previous one (``init_transactions``). What it
acts on is its subclass's business; this class holds what owning takes:

- on assignment: a fresh producer, ``init_transactions``, then a barrier
  record (barrier.py); nothing acts on a partition before it has read
  its barrier back (``OwnedPartition.caught_up``);
- on revoke or loss: the partition's state dropped, its producer flushed;
- a producer fenced by a newer owner: the partition dropped, and revived if
  the group still assigns it after a session timeout (fencing.py);
- a transaction that failed otherwise: aborted, and the partition owned
  afresh, unless the abort says the producer was fenced after all;
- the wait in ``consume()``: no longer than until the next thing due;
- shutdown: every client of this life released, also after a crash.
"""

import contextlib
import logging
from abc import abstractmethod
from collections.abc import Callable

from confluent_kafka import (
    Consumer,
    KafkaException,
    Message,
    TopicPartition,
)

from kmqadmin.kafka.client.broker_watch import BrokerWatch, abandon
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config, session_timeout_s

from .fencing import FencedPartitions, is_fenced
from .owned import Owned, OwnedPartition
from .service import Service

log = logging.getLogger(__name__)

Rebalanced = Callable[[Consumer, list[TopicPartition]], None]


class PartitionOwner[S: OwnedPartition](Service):
    # In the partitions' transactional ids (owned.fencing_producer).
    role = "owner"

    def __init__(self, owned: Owned, batch_size: int, max_wait: float) -> None:
        super().__init__()
        self.owned = owned
        self.batch_size = batch_size
        self.max_wait = max_wait
        self._states: dict[int, S] = {}
        self._consumer: Consumer | None = None
        self._watch = BrokerWatch()  # each life's consumer gets its own
        self._fenced = FencedPartitions(session_timeout_s(owned.kafka_config))
        # Assignments received: a count that climbs while nothing else changes
        # is a group that cannot settle (a flapping member, a slow turn).
        self.rebalances = 0

    # --- what a subclass does ------------------------------------------

    @abstractmethod
    def _open(self) -> None:
        """Opens this life's own clients; the consumer exists, unsubscribed."""

    @abstractmethod
    def _turn(self, records: list[Message]) -> None:
        """One turn of the loop with what consume() returned."""

    @abstractmethod
    def _new_state(self, partition: int) -> S:
        """The state of a newly owned partition: its ``owned.fencing_producer``,
        then the barrier (barrier.py) before anything acts on it."""

    @abstractmethod
    def _next_wake(self, state: S) -> int | None:
        """Epoch ms when the loop must next act on ``state``, if ever."""

    def _longest_wait(self) -> float:
        """The longest sleep in consume(); 0 when the loop has work of its own."""
        return self.max_wait

    def _read_from(self, state: S) -> int:
        """The offset a restarted partition is read from."""
        return state.next_offset

    def _forget(self, partition: int) -> None:
        """The partition's state is dropped or rebuilt: forget what else
        refers to it."""

    def _last_words(self) -> None:
        """Called before the consumer closes (a commit, say)."""

    def _close(self) -> None:
        """Closes this life's own clients (what ``_open`` opened)."""

    # --- the loop -------------------------------------------------------

    def serve(self) -> None:
        """Until stop(): consume, then act (``_turn``)."""
        owned, self._watch = self.owned, BrokerWatch()
        self._consumer = Consumer(
            consumer_config(
                owned.bootstrap_servers,
                owned.group_id,
                {**owned.kafka_config, **self._watch.settings()},
            )
        )
        try:
            self._open()
            self._consumer.subscribe(
                [owned.topic],
                on_assign=self._on_assign,
                on_revoke=self._if_current(self._on_revoke),
                on_lost=self._if_current(self._on_lost),
            )
            while not self._stop.is_set():
                self._watch.raise_if_lost()  # the service starts a new life
                self._turn(self._consumer.consume(self.batch_size, self._wait_time()))
        finally:
            self._shutdown()

    def owned_partitions(self) -> tuple[int, ...]:
        """The partitions owned now, in order; safe to call from any thread."""
        return tuple(sorted(list(self._states)))

    def loading_partitions(self) -> tuple[int, ...]:
        """The owned partitions still reading what was there at assignment
        (their barrier not read back): nothing acts on them yet."""
        return tuple(sorted(s.partition for s in list(self._states.values()) if not s.caught_up))

    def _wait_time(self) -> float:
        """Sleep in consume() no longer than until the next thing due."""
        longest = self._longest_wait()
        if longest <= 0:
            return 0.0
        wakes = [w for s in list(self._states.values()) if (w := self._next_wake(s)) is not None]
        if not wakes:
            return longest
        return min(longest, max(0.0, (min(wakes) - now_ms()) / 1000))

    # --- owning partitions ----------------------------------------------

    def _if_current(self, callback: Rebalanced) -> Rebalanced:
        """``callback`` for this life's consumer only: one given up on is
        closed on a thread of its own, and its revoke may come when the next
        life owns the partitions."""

        def called(consumer: Consumer, partitions: list[TopicPartition]) -> None:
            if consumer is self._consumer:
                callback(consumer, partitions)

        return called

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.rebalances += 1
        for tp in partitions:
            self._fenced.discard(tp.partition)
            self._states[tp.partition] = self._new_state(tp.partition)
        self._assigned(consumer, partitions)
        log.info("%s assigned %s", self.role, sorted(tp.partition for tp in partitions))

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """After the new partitions' states are built; the consumer reads
        them from the committed offsets unless this assigns otherwise."""

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._drop([tp.partition for tp in partitions])

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._drop([tp.partition for tp in partitions])

    def _drop(self, partitions: list[int]) -> None:
        for p in partitions:
            self._fenced.discard(p)
            state = self._states.pop(p, None)
            if state is not None:
                with contextlib.suppress(KafkaException):  # a fenced producer raises
                    state.producer.flush(5)
            self._forget(p)

    def _fenced_out(self, state: S, exc: KafkaException) -> None:
        """A newer owner fenced the partition's producer: drop the partition
        and wait for its revoke (see fencing.py)."""
        p = state.partition
        log.warning("partition %d has a newer owner (%s); dropping it", p, exc.args[0])
        with contextlib.suppress(KafkaException):
            state.producer.abort_transaction(5)
        self._drop([p])
        self._fenced.add(p)

    def _start_over(self, state: S, exc: KafkaException) -> None:
        """A transaction on the partition failed (``exc``), not by a fence:
        abort it and own the partition afresh. A zombie (a process stopped
        past its transaction timeout, then resumed) sees its records time out
        first and hears of the new owner only from the abort: then it drops
        the partition like any fenced one. A new producer would fence the new
        owner back."""
        p = state.partition
        log.warning("transaction on partition %d failed (%s); starting it over", p, exc.args[0])
        try:
            state.producer.abort_transaction(10)
        except KafkaException as abort:
            if is_fenced(abort):
                self._fenced_out(state, abort)
                return
            log.warning("abort on partition %d: %s", p, abort.args[0])
        self._restart(p)

    def _restart(self, partition: int) -> None:
        """Owns the partition afresh: a new producer (fencing whoever holds the
        id), a new barrier, and the partition read again from its start point."""
        assert self._consumer is not None
        self._forget(partition)
        fresh = self._states[partition] = self._new_state(partition)
        self._consumer.seek(TopicPartition(self.owned.topic, partition, self._read_from(fresh)))

    def _revive_fenced(self) -> None:
        """A fenced partition still assigned after the grace was fenced by
        someone outside the group: take it back (see fencing.py)."""
        assert self._consumer is not None
        for p in self._fenced.revivable(self._consumer, self._states):
            log.warning("partition %d still ours after a fence; taking it back", p)
            self._restart(p)

    def _shutdown(self) -> None:
        """Releases this life's clients, also after a crash, so a restart
        starts clean."""
        try:
            if self._consumer is not None and self._watch.lost():
                # Nothing to say to a cluster it cannot reach, and closing a
                # consumer in that state may never return (broker_watch.py);
                # its revoke, on that thread, is ignored (_if_current).
                abandoned, self._consumer = self._consumer, None
                abandon(abandoned)
            elif self._consumer is not None:
                try:
                    self._last_words()
                finally:
                    self._consumer.close()
        finally:
            for state in self._states.values():
                state.producer.flush(5)
            self._states.clear()
            self._close()
            self._consumer = None
