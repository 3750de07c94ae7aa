"""Scheduler: fires schedule records at their time, each exactly once.

Partitions of the schedules topic are shared through a consumer group; the
group is used for assignment only and never commits, because the schedules
themselves live in the (compacted) topic: an owner reads its partitions from
the start. Per partition it keeps a ScheduleStore and a transactional
producer whose id is derived from the partition, so the next owner fences
the previous one. Firing is one transaction: the target records and the
tombstones of their schedules.

Nothing fires on a partition before the owner has read every record that
was there when it took over (a barrier record it wrote itself tells it so):
at startup that is etf1's "missed events" pass, and schedules that fell due
while no scheduler ran fire right after it.
"""

import contextlib
import heapq
import logging
from dataclasses import dataclass

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.barrier import write_barrier
from kmqadmin.kafka.clock import now_ms
from kmqadmin.kafka.config import consumer_config, producer_config, session_timeout_s
from kmqadmin.kafka.errors import TopicMissing
from kmqadmin.kafka.fencing import FencedPartitions, is_fenced
from kmqadmin.kafka.offset_reader import OffsetReader
from kmqadmin.kafka.service import Service
from kmqadmin.kafka.topics import topic_partitions

from . import wire
from .config import SchedulerConfig
from .partition import Armed, Key, PartitionState
from .read_ahead import ReadAhead
from .rescan import Rescan
from .stats import PlannedSchedule, SchedulerStats
from .store import key_hash

log = logging.getLogger(__name__)

# The barrier is a tombstone for a key no schedule uses (etf1 ignores it too).
BARRIER_KEY = b"__kmqadmin-scheduler-barrier__"


@dataclass
class Firing:
    """One partition's share of a firing turn: one transaction."""

    state: PartitionState
    entries: list[tuple[Key, Armed]]


class Scheduler(Service):
    thread_name = "kmq-scheduler"

    def __init__(
        self, config: SchedulerConfig, batch_size: int = 5000, max_wait: float = 0.05
    ) -> None:
        super().__init__()
        self.config = config
        self.batch_size = batch_size
        self.max_wait = max_wait
        self._states: dict[int, PartitionState] = {}
        self._consumer: Consumer | None = None
        self._read_ahead: ReadAhead | None = None
        self._rescan: Rescan | None = None
        self._horizon_end = 0
        self._known_topics: set[str] = set()
        self._fired = self._skipped = self._undeliverable = 0
        self._fenced = FencedPartitions(session_timeout_s(config.kafka_config))

    # --- lifecycle -------------------------------------------------------

    def serve(self) -> None:
        """Until stop(): read schedules, fire what is due, move the horizon."""
        config = self.config
        self._horizon_end = now_ms() + config.horizon_ms
        self._consumer = Consumer(
            consumer_config(config.bootstrap_servers, config.group_id, config.kafka_config)
        )
        self._read_ahead = ReadAhead(
            OffsetReader(
                config.bootstrap_servers,
                config.topic,
                f"{config.group_id}__reader",
                config.kafka_config,
            )
        )
        self._consumer.subscribe(
            [config.topic], on_assign=self._on_assign, on_revoke=self._drop, on_lost=self._drop
        )
        try:
            while not self._stop.is_set():
                self._apply_batch(self._consumer.consume(self.batch_size, self._wait_time()))
                self._fire_due()
                self._revive_fenced()
                self._arm_read()
                for state in list(self._states.values()):
                    if state.caught_up and not state.reading:
                        self._request_read(state)
                self._move_horizon()
        finally:
            self._shutdown()

    def stats(self) -> SchedulerStats:
        states = list(self._states.values())
        return SchedulerStats(
            held=sum(len(s.store) + len(s.reading) + len(s.armed) for s in states),
            fired=self._fired,
            skipped=self._skipped,
            undeliverable=self._undeliverable,
            partitions=tuple(sorted(s.partition for s in states)),
            loading=tuple(sorted(s.partition for s in states if not s.caught_up)),
            horizon_end_ms=self._horizon_end,
        )

    def planned(self, limit: int = 100) -> list[PlannedSchedule]:
        """The ``limit`` held schedules due first: where their records are and when
        they fire. Safe to call from any thread."""

        def held():
            for state in list(self._states.values()):
                p = state.partition
                for deadline, offset in state.store.entries():
                    yield PlannedSchedule(deadline, p, offset)
                for deadline, offset in list(state.reading.values()):
                    yield PlannedSchedule(deadline, p, offset)
                for armed in list(state.armed.values()):
                    yield PlannedSchedule(armed.deadline, p, armed.offset)

        return heapq.nsmallest(limit, held())

    # --- reading schedules -----------------------------------------------

    def _apply_batch(self, records: list[KafkaMessage]) -> None:
        """Latest version wins: a valid record due within the horizon is held
        (replacing its key's older version), anything else removes the key."""
        states, horizon_end, rescan = self._states, self._horizon_end, self._rescan
        for record in records:
            if (error := record.error()) is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.warning("schedules consumer: %s", error)
                continue
            state = states.get(record.partition())
            if state is None:
                continue
            offset, key = record.offset(), record.key()
            state.next_offset = offset + 1
            if key is None:
                self._skip(record, "no key (a schedule's key is its id)")
                continue
            if key == BARRIER_KEY:
                continue
            hashed = key_hash(key)
            deadline = None
            if record.value() is not None:
                try:
                    deadline = wire.deadline(record.headers())
                except wire.ScheduleError as exc:
                    self._skip(record, str(exc))
                    continue
            state.forget(hashed)
            if rescan is not None:
                rescan.touched(state.partition, hashed)
            if deadline is not None and deadline < horizon_end:
                state.store.put(*hashed, deadline, offset)
            else:
                state.store.remove(*hashed)

    def _skip(self, record: KafkaMessage, why: str) -> None:
        self._skipped += 1
        log.warning(
            "skipped schedule record %s/%d/%d: %s",
            record.topic(),
            record.partition(),
            record.offset(),
            why,
        )

    # --- firing ----------------------------------------------------------

    def _request_read(self, state: PartitionState) -> None:
        """Once the next schedule is within the lookahead, takes everything due
        within twice that out of the store and has it read back in one batch:
        one read per lookahead per partition, however dense the schedules."""
        assert self._read_ahead is not None
        now, lookahead = now_ms(), self.config.lookahead_ms
        next_deadline = state.store.next_deadline()
        if next_deadline is None or next_deadline > now + lookahead:
            return
        due = state.store.pop_due(now + 2 * lookahead, self.batch_size)
        if due:
            for deadline, offset, hi, lo in due:
                state.reading[(hi, lo)] = (deadline, offset)
            self._read_ahead.request(state, state.partition, due)

    def _arm_read(self) -> None:
        """Arms what has been read back, unless a newer version came meanwhile."""
        assert self._read_ahead is not None
        for state, ready in self._read_ahead.finished():
            if self._states.get(state.partition) is not state:
                continue  # dropped or rebuilt since: its new owner reads afresh
            if ready is None:
                log.error("read-back on partition %d timed out; rebuilding it", state.partition)
                self._rebuild(state.partition)
                continue
            for key, offset, outcome in ready:
                if state.reading.get(key, (0, -1))[1] != offset:
                    continue  # a newer version came meanwhile
                del state.reading[key]
                if outcome is None:
                    log.info(
                        "schedule %s/%d/%d is gone", self.config.topic, state.partition, offset
                    )
                elif isinstance(outcome, str):
                    self._skipped += 1
                    log.warning("schedule on partition %d not fired: %s", state.partition, outcome)
                elif self._topic_exists(outcome.target.topic):
                    state.arm(key, outcome)
                else:
                    self._undeliverable += 1
                    log.error(
                        "schedule %s/%d/%d targets missing topic %r; it stays in the "
                        "schedules topic and fires at the next start once the topic exists",
                        self.config.topic,
                        state.partition,
                        offset,
                        outcome.target.topic,
                    )

    def _fire_due(self) -> None:
        """Fires what is due on every partition: one transaction per partition.
        All are produced before the first commit, so their records travel
        together and each commit mostly waits for its end-transaction round
        trip. (Committing on threads measured slower: the broker serialises.)"""
        now, firings = now_ms(), []
        for state in list(self._states.values()):
            if state.caught_up and (entries := state.take_due(now)):
                firing = Firing(state, entries)
                try:
                    self._produce_firing(state, entries)
                except KafkaException as exc:
                    self._recover(firing, exc)
                    continue
                firings.append(firing)
        for firing in firings:
            try:
                firing.state.producer.commit_transaction(30)
            except KafkaException as exc:
                self._recover(firing, exc)
                continue
            for key, _ in firing.entries:
                firing.state.armed.pop(key, None)
            self._fired += len(firing.entries)

    def _produce_firing(self, state: PartitionState, entries: list[tuple[Key, Armed]]) -> None:
        """Opens the partition's transaction and produces each target record and
        tombstone into it."""
        producer, topic = state.producer, self.config.topic
        producer.begin_transaction()
        for _, entry in entries:
            target = entry.target
            producer.produce(
                target.topic, key=target.key, value=target.value, headers=target.headers
            )
            producer.produce(topic, key=entry.key, value=None, partition=state.partition)

    def _recover(self, firing: "Firing", exc: KafkaException) -> None:
        """An aborted firing is retried on the next turn. A fenced or broken
        producer gets the partition rebuilt: a new producer fences whoever
        holds the id, and the partition is read again up to a new barrier, so
        whatever the failed attempt did or did not commit is seen before
        anything fires again."""
        state, error = firing.state, exc.args[0]
        if is_fenced(exc):
            log.warning("partition %d has a newer owner (%s); dropping it", state.partition, error)
            with contextlib.suppress(KafkaException):
                state.producer.abort_transaction(5)
            self._drop(self._consumer, [TopicPartition(self.config.topic, state.partition)])
            self._fenced.add(state.partition)
            return
        if not error.fatal():
            try:
                state.producer.abort_transaction(10)
            except KafkaException:
                pass
            else:
                log.warning("firing on partition %d aborted (%s); retrying", state.partition, error)
                for key, entry in firing.entries:
                    state.arm(key, entry)
                return
        log.error("firing on partition %d failed (%s); rebuilding it", state.partition, error)
        self._rebuild(state.partition)

    def _topic_exists(self, name: str) -> bool:
        assert self._consumer is not None
        if name not in self._known_topics:
            try:
                topic_partitions(self._consumer, name)
            except TopicMissing:
                return False
            self._known_topics.add(name)
        return True

    # --- the horizon -----------------------------------------------------

    def _move_horizon(self) -> None:
        """Every half horizon, extends it and rescans for what came within it."""
        rescan = self._rescan
        if rescan is not None:
            rescan.step(self.batch_size)
            if rescan.done:
                rescan.close()
                self._rescan = None
            return
        now = now_ms()
        if now + self.config.horizon_ms // 2 < self._horizon_end:
            return
        old_end, self._horizon_end = self._horizon_end, now + self.config.horizon_ms
        config = self.config
        self._rescan = Rescan(
            Consumer(
                consumer_config(
                    config.bootstrap_servers, f"{config.group_id}__rescan", config.kafka_config
                )
            ),
            config.topic,
            old_end,
            self._horizon_end,
            BARRIER_KEY.__eq__,
        )
        for state in self._states.values():
            self._rescan.add(state.partition, state.store, state.next_offset)

    # --- partitions ------------------------------------------------------

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self._fenced.discard(tp.partition)
            self._states[tp.partition] = self._new_state(tp.partition)
            tp.offset = OFFSET_BEGINNING  # the schedules are the topic: read it all
        consumer.assign(partitions)
        log.info("scheduler assigned %s", sorted(tp.partition for tp in partitions))

    def _new_state(self, partition: int) -> PartitionState:
        producer = Producer(
            producer_config(
                self.config.bootstrap_servers,
                transactional_id=f"kmq-scheduler-{self.config.topic}-{partition}",
                extra=self.config.kafka_config,
            )
        )
        producer.init_transactions(30)  # fences the previous owner, aborts its open firing
        barrier = write_barrier(producer, self.config.topic, partition, BARRIER_KEY, None)
        return PartitionState(partition, producer, barrier + 1)

    def _rebuild(self, partition: int) -> None:
        assert self._consumer is not None
        if self._rescan is not None:
            self._rescan.drop(partition)
        self._states[partition] = self._new_state(partition)
        self._consumer.seek(TopicPartition(self.config.topic, partition, OFFSET_BEGINNING))

    def _revive_fenced(self) -> None:
        """A fenced partition still assigned after the grace was fenced by
        someone outside the group: take it back (see kafka/fencing.py)."""
        assert self._consumer is not None
        for p in self._fenced.revivable(self._consumer, self._states):
            log.warning("partition %d still ours after a fence; taking it back", p)
            self._rebuild(p)

    def _drop(self, consumer: Consumer | None, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self._fenced.discard(tp.partition)
            state = self._states.pop(tp.partition, None)
            if state is not None:
                with contextlib.suppress(KafkaException):  # a fenced producer raises
                    state.producer.flush(5)
            if self._rescan is not None:
                self._rescan.drop(tp.partition)

    def _wait_time(self) -> float:
        """Sleep in consume() no longer than until the next schedule must be armed
        or fired."""
        if self._rescan is not None:
            return 0.0
        states = list(self._states.values())
        # A read under way comes back soon, to be armed before it is due.
        longest = 0.005 if any(s.reading for s in states) else self.max_wait
        lookahead = self.config.lookahead_ms
        wakes = [w for s in states if (w := s.next_wake(lookahead)) is not None]
        if not wakes:
            return longest
        return min(longest, max(0.0, (min(wakes) - now_ms()) / 1000))

    def _shutdown(self) -> None:
        try:
            if self._consumer is not None:
                self._consumer.close()
        finally:
            for state in self._states.values():
                state.producer.flush(5)
            self._states.clear()
            for closable in (self._read_ahead, self._rescan):
                if closable is not None:
                    closable.close()
            self._read_ahead = self._rescan = None
            self._consumer = None
