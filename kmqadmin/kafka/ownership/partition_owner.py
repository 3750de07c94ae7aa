"""The skeleton of a long-running partition owner (tracker, scheduler).

An owner reads a topic through a consumer group that shares its partitions
out, and acts on the partitions it is assigned with one transactional
producer, whose transactions carry offset commits with the consumer's group
metadata, so the broker refuses them once the group has moved on (KIP-447;
owned.py, fencing.py). What it acts on is its subclass's business; this
class holds what owning takes:

- on assignment: a barrier record per new partition, in one transaction,
  once their offsets are stable (barrier.py); nothing acts on a partition
  before it has read its barrier back (``OwnedPartition.caught_up``);
- on revoke or loss: the partition's state dropped;
- ``_transact``: one transaction over the partitions a turn acts on; one
  that fails is aborted and the subclass takes back what it took out, and
  a producer that can do nothing more ends the life, committing nothing;
  with two ``lanes`` the next one begins while this one commits, or it
  commits behind the loop (owner_producer.py): both are settled at the
  top of a turn or before ownership changes;
- the wait in ``consume()``: no longer than until the next thing due;
- shutdown: every client of this life released, also after a crash.
"""

import logging
from abc import abstractmethod
from collections.abc import Callable, Mapping
from types import MappingProxyType

from confluent_kafka import Consumer, Message, Producer, TopicPartition

from kmqadmin.kafka.client.broker_watch import BrokerWatch, close_or_abandon, if_current
from kmqadmin.kafka.client.clock import now_ms, to_s
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.ownership.barrier import stable_offsets
from kmqadmin.kafka.ownership.owned import Owned, OwnedPartition
from kmqadmin.kafka.ownership.owner_producer import OwnerProducer
from kmqadmin.kafka.ownership.service import Service

log = logging.getLogger(__name__)


class PartitionOwner[S: OwnedPartition](Service):
    role = "owner"
    barrier_value: bytes | None = None
    lanes = 1  # transactional producers taking turns (owner_producer.py)
    consumer_settings: Mapping[str, object] = MappingProxyType({})  # over the topic's

    def __init__(self, owned: Owned, batch_size: int, max_wait: float) -> None:
        super().__init__()
        self.owned = owned
        self.batch_size = batch_size
        self.max_wait = max_wait
        self._states: dict[int, S] = {}
        self._consumer: Consumer | None = None
        self._producer: OwnerProducer | None = None
        self._watch = BrokerWatch()  # each life's consumer gets its own
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
    def _barrier(self, partition: int) -> bytes:
        """The key of the partition's barrier record (its value is
        ``barrier_value``): a record every reader of the topic takes for a
        no-op."""

    @abstractmethod
    def _new_states(
        self, catch_up_to: dict[int, int], committed: list[TopicPartition]
    ) -> dict[int, S]:
        """The states of newly owned partitions, each one's barrier at
        ``catch_up_to[partition] - 1`` and its committed offset (stable) in
        ``committed``; built together, so that what they ask the cluster is
        one request for them all, not one per partition."""

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
        """The partition's state is dropped or rebuilt: forget what refers to it."""

    def _last_words(self) -> None:
        """Called before the consumer closes (a commit, say)."""

    def _close(self) -> None:
        """Closes this life's own clients (what ``_open`` opened)."""

    # --- the loop -------------------------------------------------------

    def serve(self) -> None:
        """Until stop(): consume, then act (``_turn``)."""
        owned, self._watch = self.owned, BrokerWatch()
        settings = {**owned.kafka_config, **self.consumer_settings, **self._watch.settings()}
        self._consumer = Consumer(
            consumer_config(owned.bootstrap_servers, owned.group_id, settings)
        )
        try:
            # The group is joined while the producer starts; nothing is acted
            # on before consume() hands over an assignment, and by then the
            # producer has aborted what this slot's previous life left open.
            self._consumer.subscribe(
                [owned.topic],
                on_assign=if_current(lambda: self._consumer, self._on_assign),
                on_revoke=if_current(lambda: self._consumer, self._on_revoke),
                on_lost=if_current(lambda: self._consumer, self._on_lost),
            )
            self._producer = OwnerProducer(owned, self.lanes)
            self._open()
            while not self._stop.is_set():
                self._watch.raise_if_lost()  # the service starts a new life
                self._producer.expire()
                self._producer.collect()
                self._turn(self._consumer.consume(self.batch_size, self._wait_time()))
        except BaseException:
            # A turn may have taken work out of its states for a transaction
            # that never committed: nothing of this life is committed now
            # (the revoke in close() and _last_words() find no state).
            self._states.clear()
            raise
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
        return min(longest, max(0.0, to_s(min(wakes) - now_ms())))

    # --- owning partitions ----------------------------------------------

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.rebalances += 1
        self._own([tp.partition for tp in partitions])
        self._assigned(consumer, partitions)
        log.info("%s assigned %s", self.role, sorted(tp.partition for tp in partitions))

    def _own(self, partitions: list[int]) -> None:
        """New states for ``partitions``, behind one transaction of barriers
        written once their offsets are stable (barrier.py)."""
        if not partitions:
            return
        assert self._producer is not None and self._consumer is not None
        self._producer.unprepare()
        committed = stable_offsets(self._consumer, self.owned.topic, partitions)
        keys = {p: self._barrier(p) for p in partitions}
        barriers = self._producer.barriers(self.owned.topic, keys, self.barrier_value)
        for p in partitions:
            self._forget(p)
        catch_up_to = {p: barriers[p] + 1 for p in partitions}
        self._states.update(self._new_states(catch_up_to, committed))

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """After the new partitions' states are built; the consumer reads
        them from the committed offsets unless this assigns otherwise."""

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._drop([tp.partition for tp in partitions])

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._drop([tp.partition for tp in partitions])

    def _drop(self, partitions: list[int]) -> None:
        for p in partitions:
            self._states.pop(p, None)
            self._forget(p)
        if self._producer is not None:
            self._producer.unprepare()

    def _transact(
        self,
        offsets: list[TopicPartition],
        act: Callable[[Producer], None],
        prepare_next: list[TopicPartition] | None = None,
    ) -> bool:
        """One transaction committing ``offsets`` (owner_producer.py); False
        when it was aborted, and the caller undoes what it took out of its
        states. ``prepare_next``: as OwnerProducer.transact's."""
        assert self._producer is not None and self._consumer is not None
        metadata = self._consumer.consumer_group_metadata()
        return self._producer.transact(offsets, metadata, act, prepare_next)

    def _restart(self, partitions: list[int]) -> None:
        """Owns ``partitions`` afresh: new barriers, and each read again from
        its start point."""
        assert self._consumer is not None
        owned = [p for p in partitions if p in self._states]
        self._own(owned)
        for p in owned:
            start = self._read_from(self._states[p])
            self._consumer.seek(TopicPartition(self.owned.topic, p, start))

    def _shutdown(self) -> None:
        """Releases this life's clients, also after a crash: a restart starts clean."""
        try:
            if (consumer := self._consumer) is not None:
                if self._watch.lost():  # abandoned: its revoke, on the thread
                    self._consumer = None  # that closes it, is ignored (if_current)
                close_or_abandon(consumer, self._watch, self._last_words)
        finally:
            self._states.clear()
            self._close()
            if self._producer is not None:
                self._producer.close(5)
            self._consumer = self._producer = None
