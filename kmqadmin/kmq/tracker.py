"""RedeliveryTracker: reads the markers topic and redelivers what nobody acked.

This is the loop of the tracker as kmq splits it: assignment, consume,
redeliver what is due, commit. Per assigned markers partition it keeps a
MarkersPartition: what the markers say (kmq/tracked_partition.py: the open
set, rejected reasons, the commit point). What is due on every partition in
a turn is redelivered or dead-lettered in one transaction of the tracker's
producer, fenced by the group's generation
(kafka/ownership/partition_owner.py, kmq/redeliverer.py).
"""

import logging
import time
from dataclasses import dataclass
from functools import partial

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.ownership.owned import Owned, OwnedPartition, process_slot
from kmqadmin.kafka.ownership.partition_owner import PartitionOwner

from . import markers
from .config import QueueConfig
from .open_set import OpenSet
from .redeliverer import DueBatch, Redeliverer
from .start_points import start_points
from .stats import TrackerStats
from .tracked_partition import TrackedPartition, apply_batch

log = logging.getLogger(__name__)


@dataclass(eq=False, kw_only=True)
class MarkersPartition(TrackedPartition, OwnedPartition):
    """A markers partition the tracker owns: what its markers say."""


class RedeliveryTracker(PartitionOwner[MarkersPartition]):
    thread_name = "kmq-tracker"
    role = "tracker"
    barrier_value = markers.END

    def __init__(
        self,
        config: QueueConfig,
        batch_size: int = 2000,
        max_wait: float = 0.02,
        commit_interval: float = 1.0,
        read_timeout: float = 10.0,
        slot: str | None = None,
    ) -> None:
        """``slot``: this tracker's name among its group's (owned.py), kept
        across its restarts by hosts that can (a worker's node name)."""
        owned = Owned(
            config.bootstrap_servers,
            config.markers_topic,
            config.tracker_group_id,
            config.kafka_config,
            slot or process_slot(),
        )
        super().__init__(owned, batch_size, max_wait)
        self.config = config
        self.commit_interval = commit_interval
        self.read_timeout = read_timeout
        self._redeliverer: Redeliverer | None = None
        self._last_commit = 0.0
        self._redelivered = self._dead_lettered = self._skipped = self._undecodable = 0
        self._acked = 0
        self._lag = 0

    def stats(self) -> TrackerStats:
        states = list(self._states.values())
        return TrackerStats(
            in_flight=sum(len(s.open) for s in states),
            acked=self._acked,
            redelivered=self._redelivered,
            dead_lettered=self._dead_lettered,
            skipped=self._skipped,
            undecodable=self._undecodable,
            markers_lag=self._lag,
            partitions=self.owned_partitions(),
            rebalances=self.rebalances,
        )

    # --- the loop --------------------------------------------------------

    def _open(self) -> None:
        assert self._consumer is not None
        self._redeliverer = Redeliverer(self.config, self.read_timeout)
        self._redeliverer.dlq_partitions = len(
            topic_partitions(self._consumer, self.config.dlq_topic)
        )
        self._last_commit = time.monotonic()

    def _turn(self, records: list[KafkaMessage]) -> None:
        """Applies the markers read, redelivers what is due, reads ahead, commits."""
        self._acked += apply_batch(self._states, records, self._skip)
        self._redeliver_due()
        assert self._redeliverer is not None
        caught_up = [s for s in self._states.values() if s.caught_up]
        self._redeliverer.read_ahead(caught_up, self.batch_size)
        if time.monotonic() - self._last_commit >= self.commit_interval:
            self._commit_progress()
            self._last_commit = time.monotonic()

    def _skip(self, state: TrackedPartition, offset: int, exc: markers.MarkerError) -> None:
        self._skipped += 1
        log.warning(
            "skipped marker %s/%d/%d: %s", self.config.markers_topic, state.partition, offset, exc
        )

    def _next_wake(self, state: MarkersPartition) -> int | None:
        return state.open.next_deadline()

    # --- redelivery ------------------------------------------------------

    def _redeliver_due(self) -> None:
        """What is due, most overdue partition first, up to ``batch_size``
        in all, in one transaction."""
        assert self._redeliverer is not None
        now, parts, budget = now_ms(), [], self.batch_size
        overdue = sorted(
            (deadline, s.partition, s)
            for s in list(self._states.values())
            if s.caught_up and (deadline := s.open.next_deadline()) is not None and deadline <= now
        )
        for _, p, state in overdue:
            due = state.open.pop_due(self._read_until(state, now), budget)
            if not due:
                continue
            originals = self._redeliverer.read_originals(p, due)
            if originals is None:
                # pop_due closed the due entries; re-reading the partition from
                # its committed offset reopens them from their start markers.
                self._restart([p])
                continue
            parts.append((state, due, originals))
            if (budget := budget - len(due)) <= 0:
                break
        if parts:
            self._redeliver(DueBatch(parts))

    def _read_until(self, state: MarkersPartition, now: int) -> int:
        """The time up to which this partition's markers are known to be read:
        now when the tracker has read to the end, else the timestamp of the
        newest marker read. A message due after that may have its end marker
        in the part not read yet, so a tracker that lags behind a burst of
        markers redelivers only what it knows was not acked in time."""
        assert self._consumer is not None
        last = state.last_read
        if last is None:
            return now
        tp = TopicPartition(self.config.markers_topic, state.partition)
        ends = self._consumer.get_watermark_offsets(tp, cached=True)
        # The position, not the next marker's offset: a transaction's commit
        # marker takes an offset too, and is never handed out as a record.
        position = self._consumer.position([tp])[0].offset
        if ends is None or ends[1] < 0 or position < 0 or position >= ends[1]:
            return now
        return min(now, last.timestamp()[1])

    def _redeliver(self, batch: DueBatch) -> None:
        """One transaction: each partition's copies, dead letters and end
        markers, and its commit point. Aborted, it leaves nothing visible
        (read_committed), so the partitions read again open exactly what
        was open before."""
        redeliverer = self._redeliverer
        assert redeliverer is not None
        offsets = batch.offsets(self.config.markers_topic)
        if not self._transact(offsets, partial(batch.write, redeliverer)):
            self._restart(batch.partitions)  # pop_due closed them: read again, they are open
            return
        batch.committed(offsets)
        for sent in batch.sent:
            self._redelivered += sent.redelivered
            self._dead_lettered += sent.dead_lettered
            self._skipped += sent.gone
            self._undecodable += sent.undecodable

    # --- offsets and rebalances ------------------------------------------

    def _commit_progress(self) -> None:
        assert self._consumer is not None
        offsets, lag = [], 0
        for state in self._states.values():
            commit = state.commit_offset()
            if commit != state.committed:
                closed = state.open.closed.to_metadata()
                tp = TopicPartition(self.config.markers_topic, state.partition, commit, closed)
                offsets.append(tp)
            high = self._consumer.get_watermark_offsets(
                TopicPartition(self.config.markers_topic, state.partition), cached=True
            )
            if high is not None and high[1] >= 0:
                lag += max(0, high[1] - state.next_offset)
        self._lag = lag
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            log.warning("markers offset commit failed: %s", exc)
            return
        for tp in offsets:
            self._states[tp.partition].committed = tp.offset

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Each read from where _new_states found it starts, so the consumer
        does not ask the coordinator (busy with every owner's join) again."""
        for tp in partitions:
            tp.offset = self._states[tp.partition].next_offset
        consumer.assign(partitions)

    def _barrier(self, partition: int) -> bytes:
        """An end marker for offset -1: no tracker (kmq's included) can take
        it for a message."""
        return markers.encode_key(partition, -1)

    def _new_states(
        self, catch_up_to: dict[int, int], committed: list[TopicPartition]
    ) -> dict[int, MarkersPartition]:
        """Each read from its start point (start_points.py)."""
        assert self._consumer is not None
        found = start_points(self._consumer, self.config.markers_topic, committed)
        return {
            p: MarkersPartition(
                partition=p,
                next_offset=start.offset,
                open=OpenSet(start.closed),
                catch_up_to=catch_up_to[p],
                committed=start.offset,
            )
            for p, start in found.items()
        }

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._commit_progress()
        super()._on_revoke(consumer, partitions)

    def _last_words(self) -> None:
        self._commit_progress()

    def _close(self) -> None:
        if self._redeliverer is not None:
            self._redeliverer.close()
        self._redeliverer = None
