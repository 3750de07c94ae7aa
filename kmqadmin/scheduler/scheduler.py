"""Scheduler: fires schedule records at their time, each exactly once.

Partitions of the schedules topic are shared through a consumer group. The
schedules themselves live in the (compacted) topic, so an owner reads its
partitions from the start; the offsets its firings commit are there to
fence it once the group has moved on (kafka/ownership/fencing.py), and no
one reads from them. Per partition it keeps a ScheduleStore; every due
partition fires in one transaction per turn: the target records and the
tombstones of their schedules (scheduler/firing.py), on two transactional
producers taking turns, so the next transaction is begun while one commits
(kafka/ownership/owner_producer.py).

Nothing fires on a partition before the owner has read every record that
was there when it took over (a barrier record it wrote itself tells it so):
at startup that is etf1's "missed events" pass, and schedules that fell due
while no scheduler ran fire right after it.
"""

import heapq
import logging

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.ownership.owned import Owned, process_slot
from kmqadmin.kafka.ownership.partition_owner import PartitionOwner
from kmqadmin.scheduler import firing, live_records
from kmqadmin.scheduler.config import SchedulerConfig
from kmqadmin.scheduler.lateness import Lateness
from kmqadmin.scheduler.partition import PartitionState
from kmqadmin.scheduler.read_ahead import ReadAhead
from kmqadmin.scheduler.rescan import Horizon
from kmqadmin.scheduler.stats import PlannedSchedule, SchedulerStats
from kmqadmin.scheduler.targets import Targets

log = logging.getLogger(__name__)

# The barrier is a tombstone for a key no schedule uses (etf1 ignores it too).
BARRIER_KEY = b"__kmqadmin-scheduler-barrier__"
# A firing begins the next transaction while it commits when more is due
# within this (a few turns): further off, that one sends its offsets itself,
# and no transaction stays open while nothing is about to fire.
PREPARE_WITHIN_MS = 100


class Scheduler(PartitionOwner[PartitionState]):
    thread_name = "kmq-scheduler"
    role = "scheduler"
    # Firing back to back: the next transaction begins while one commits.
    lanes = 2

    def __init__(
        self,
        config: SchedulerConfig,
        batch_size: int = 5000,
        max_wait: float = 0.05,
        slot: str | None = None,
    ) -> None:
        """``slot``: as the tracker's (kafka/ownership/owned.py)."""
        owned = Owned(
            config.bootstrap_servers,
            config.topic,
            config.group_id,
            config.kafka_config,
            slot or process_slot(),
        )
        super().__init__(owned, batch_size, max_wait)
        self.config = config
        self._read_ahead: ReadAhead | None = None
        self._horizon: Horizon | None = None
        self._targets = Targets(config)
        self._fired = self._skipped = 0
        self._lateness = Lateness()

    def stats(self) -> SchedulerStats:
        states = list(self._states.values())
        return SchedulerStats(
            held=sum(len(s.store) + len(s.reading) + len(s.armed) for s in states),
            fired=self._fired,
            skipped=self._skipped,
            undeliverable=self._targets.undeliverable,
            forbidden=self._targets.forbidden,
            partitions=self.owned_partitions(),
            loading=self.loading_partitions(),
            horizon_end_ms=0 if self._horizon is None else self._horizon.end,
            lateness=self._lateness.snapshot(),
            rebalances=self.rebalances,
        )

    def planned(self, limit: int = 100) -> list[PlannedSchedule]:
        """The ``limit`` held schedules due first: where their records are and when
        they fire. Safe to call from any thread."""
        held = (planned for s in list(self._states.values()) for planned in s.planned())
        return heapq.nsmallest(limit, held)

    # --- the loop --------------------------------------------------------

    def _open(self) -> None:
        config = self.config
        self._horizon = Horizon(config, BARRIER_KEY.__eq__)
        self._read_ahead = ReadAhead(
            OffsetReader(
                config.bootstrap_servers,
                config.topic,
                f"{config.group_id}__reader",
                config.kafka_config,
            )
        )

    def _turn(self, records: list[KafkaMessage]) -> None:
        """Reads schedules, fires what is due, moves the horizon."""
        assert self._horizon is not None
        self._apply_batch(records)
        if due := firing.due(list(self._states.values()), now_ms(), self.batch_size):
            self._fire(due)
        self._arm_read()
        assert self._read_ahead is not None
        for state in list(self._states.values()):
            if state.caught_up and not state.reading:
                self._read_ahead.request_due(state, self.config.lookahead_ms, self.batch_size)
        self._horizon.move(list(self._states.values()), self.batch_size)

    def _longest_wait(self) -> float:
        """Nothing while a rescan is under way; a read under way comes back soon,
        to be armed before it is due."""
        if self._horizon is not None and self._horizon.rescan is not None:
            return 0.0
        return 0.005 if any(s.reading for s in list(self._states.values())) else self.max_wait

    def _next_wake(self, state: PartitionState) -> int | None:
        """When the next schedule must be armed or fired."""
        return state.next_wake(self.config.lookahead_ms)

    # --- reading schedules -----------------------------------------------

    def _apply_batch(self, records: list[KafkaMessage]) -> None:
        """Latest version wins (live_records.py)."""
        assert self._horizon is not None
        rescan = self._horizon.rescan
        touched = None if rescan is None else rescan.touched
        for error in live_records.apply_batch(
            self._states, records, self._horizon.end, BARRIER_KEY, self._skip, touched
        ):
            log.warning("schedules consumer: %s", error)

    def _skip(self, record: KafkaMessage, why: str) -> None:
        where = f"{record.topic()}/{record.partition()}/{record.offset()}"
        log.warning("skipped schedule record %s: %s", where, why)
        self._skipped += 1

    # --- arming ----------------------------------------------------------

    def _arm_read(self) -> None:
        """Arms what has been read back, unless a newer version came meanwhile
        or its target cannot take it (scheduler/targets.py)."""
        assert self._read_ahead is not None and self._consumer is not None
        for state, ready in self._read_ahead.finished():
            if self._states.get(state.partition) is not state:
                continue  # dropped or rebuilt since: its new owner reads afresh
            if ready is None:
                log.error("read-back on partition %d timed out; rebuilding it", state.partition)
                self._restart([state.partition])
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
                    log.warning("schedule on partition %d not fired: %s", state.partition, outcome)
                    self._skipped += 1
                elif self._targets.take(
                    self._consumer, state.partition, offset, outcome.target.topic
                ):
                    state.arm(key, outcome)

    # --- firing ----------------------------------------------------------

    def _fire(self, due: list[firing.Firing]) -> None:
        """One transaction; lateness is measured at its commit, when the
        records became visible. Aborted, everything fires on the next turn."""
        topic = self.config.topic
        offsets = [f.offset(topic) for f in due]

        def act(producer: Producer) -> None:
            for f in due:
                f.produce(producer, topic)

        if not self._transact(offsets, act, self._next_offsets()):
            for f in due:
                f.rearm()
            return
        committed = now_ms()
        for f in due:
            f.fired()
            for _, entry in f.entries:
                self._lateness.observe(committed - entry.deadline)
            self._fired += len(f.entries)

    def _next_offsets(self) -> list[TopicPartition] | None:
        """What the next transaction commits, when it is due soon enough to
        be begun while this one commits: every partition that may fire."""
        ready = [s for s in list(self._states.values()) if s.caught_up]
        soon = now_ms() + PREPARE_WITHIN_MS
        if not any((first := s.first_due()) is not None and first <= soon for s in ready):
            return None
        return [TopicPartition(self.config.topic, s.partition, s.next_offset) for s in ready]

    # --- partitions ------------------------------------------------------

    def _barrier(self, partition: int) -> bytes:
        return BARRIER_KEY

    def _new_states(
        self, catch_up_to: dict[int, int], committed: list[TopicPartition]
    ) -> dict[int, PartitionState]:
        """Each read from the start: the schedules are the topic, and the
        committed offsets are only the fence."""
        return {p: PartitionState(partition=p, catch_up_to=end) for p, end in catch_up_to.items()}

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            tp.offset = OFFSET_BEGINNING  # the schedules are the topic: read it all
        consumer.assign(partitions)

    def _read_from(self, state: PartitionState) -> int:
        return OFFSET_BEGINNING

    def _forget(self, partition: int) -> None:
        if self._horizon is not None:
            self._horizon.drop(partition)

    def _close(self) -> None:
        for closable in (self._read_ahead, self._horizon):
            if closable is not None:
                closable.close()
        self._read_ahead = None
