"""RedeliveryTracker: reads the markers topic and redelivers what nobody acked.

This is the loop of the tracker as kmq splits it: assignment, consume,
redeliver what is due, commit. Per assigned markers partition it keeps a
MarkersPartition: what the markers say (kmq/tracking/tracked_partition.py: the open
set, rejected reasons, the commit point) and what of it is committed
(kmq/tracking/markers_partition.py). What is due on every partition in a turn is
redelivered or dead-lettered in one transaction of the tracker's producer,
fenced by the group's generation (kafka/ownership/partition_owner.py,
kmq/tracking/redeliverer.py), and committed behind the loop: in a burst of deadlines
the next turn's copies wait on no commit.
"""

import logging
import time
from functools import partial
from types import MappingProxyType

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.ownership.owned import Owned, process_slot
from kmqadmin.kafka.ownership.partition_owner import PartitionOwner
from kmqadmin.kmq import markers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.tracking.markers_partition import MarkersPartition
from kmqadmin.kmq.tracking.open_set import OpenSet
from kmqadmin.kmq.tracking.redeliverer import DueBatch, Redeliverer, Sent
from kmqadmin.kmq.tracking.start_points import start_points
from kmqadmin.kmq.tracking.stats import TrackerStats
from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition, apply_batch

log = logging.getLogger(__name__)


class RedeliveryTracker(PartitionOwner[MarkersPartition]):
    thread_name = "kmq-tracker"
    role = "tracker"
    barrier_value = markers.END
    # Redeliveries commit behind the loop, on two producers taking turns.
    lanes = 2
    # Where it reaches each partition's last stable offset (known_until).
    consumer_settings = MappingProxyType({"enable.partition.eof": True})

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
        self._sent = Sent(0, 0, 0, 0)  # what redelivery transactions committed did
        self._acked = self._skipped = self._lag = 0

    def stats(self) -> TrackerStats:
        states = list(self._states.values())
        return TrackerStats(
            in_flight=sum(len(s.open) for s in states),
            acked=self._acked,
            redelivered=self._sent.redelivered,
            dead_lettered=self._sent.dead_lettered,
            skipped=self._skipped + self._sent.gone,
            undecodable=self._sent.undecodable,
            markers_lag=self._lag,
            partitions=self.owned_partitions(),
            rebalances=self.rebalances,
        )

    # --- the loop --------------------------------------------------------

    def _open(self) -> None:
        assert self._consumer is not None
        self._redeliverer = Redeliverer(self.config, self.read_timeout)
        dlq = topic_partitions(self._consumer, self.config.dlq_topic)
        self._redeliverer.dlq_partitions = len(dlq)
        self._last_commit = time.monotonic()

    def _turn(self, records: list[KafkaMessage]) -> None:
        """Applies the markers read, redelivers what is due, reads ahead, commits."""
        self._acked += apply_batch(self._states, records, self._skip)
        # An aborted redelivery took its due: read again (after the records
        # are applied: a seek drops those fetched before it), they are open.
        if failed := [p for p, s in self._states.items() if s.failed]:
            self._restart(failed)
        self._redeliver_due()
        assert self._redeliverer is not None
        caught_up = [s for s in self._states.values() if s.caught_up]
        self._redeliverer.read_ahead(caught_up, self.batch_size)
        if time.monotonic() - self._last_commit >= self.commit_interval:
            self._commit_progress()
            self._last_commit = time.monotonic()

    def _skip(self, state: TrackedPartition, offset: int, exc: markers.MarkerError) -> None:
        """Logged, then counted: whoever reads the count (stats() runs on
        other threads) finds the marker's coordinates in the log already."""
        where = f"{self.config.markers_topic}/{state.partition}/{offset}"
        log.warning("skipped marker %s: %s", where, exc)
        self._skipped += 1

    def _next_wake(self, state: MarkersPartition) -> int | None:
        return state.open.next_deadline()

    # --- redelivery ------------------------------------------------------

    def _redeliver_due(self) -> None:
        """What is due, most overdue partition first, up to ``batch_size``
        in all, in one transaction."""
        assert self._redeliverer is not None and self._consumer is not None
        now, parts, budget = now_ms(), [], self.batch_size
        due_by = [
            (first, s.partition, s)
            for s in list(self._states.values())
            if s.caught_up and (first := s.open.next_deadline()) is not None and first <= now
        ]
        for _, _, state in sorted(due_by):
            topic, held_since = self.config.markers_topic, state.held_since()
            until = state.known_until(self._consumer, topic, now, held_since)
            p = state.partition
            due = state.open.pop_due(until, budget)
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

    def _redeliver(self, batch: DueBatch[MarkersPartition]) -> None:
        """One transaction: each partition's copies, dead letters and end
        markers, and its safe point (markers_partition.py). It commits
        behind the loop, so the next turn's copies need not wait for it.
        Aborted, it leaves nothing visible (read_committed), and the
        partitions read again open exactly what was open before."""
        assert self._redeliverer and self._producer and self._consumer
        topic = self.config.markers_topic
        offsets = [state.safe_point(topic) for state, _, _ in batch.parts]
        began = now_ms()
        for state, _, _ in batch.parts:
            state.undecided.append(began)
        write, done = partial(batch.write, self._redeliverer), partial(self._decided, batch)
        metadata = self._consumer.consumer_group_metadata()
        self._producer.transact_behind(offsets, metadata, write, done)

    def _decided(
        self, batch: DueBatch[MarkersPartition], committed: list[TopicPartition] | None
    ) -> None:
        """A redelivery transaction's outcome, on the loop's thread."""
        outcomes = committed or [None] * len(batch.parts)
        for (state, _, _), tp in zip(batch.parts, outcomes, strict=True):
            state.decided(tp)
        if committed is not None:
            self._sent = sum(batch.sent, self._sent)

    # --- offsets and rebalances ------------------------------------------

    def _commit_progress(self) -> None:
        assert self._consumer is not None
        offsets, lag = [], 0
        for state in self._states.values():
            if (point := state.moved_point(self.config.markers_topic)) is not None:
                offsets.append(point)
            tp = TopicPartition(self.config.markers_topic, state.partition)
            high = self._consumer.get_watermark_offsets(tp, cached=True)
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
            self._states[tp.partition].committed = tp

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
        topic = self.config.markers_topic
        found = start_points(self._consumer, topic, committed)
        return {
            p: MarkersPartition(
                partition=p,
                next_offset=start.offset,
                open=OpenSet(start.closed),
                catch_up_to=catch_up_to[p],
                committed=TopicPartition(topic, p, start.offset, start.closed.to_metadata()),
            )
            for p, start in found.items()
        }

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        assert self._producer is not None  # its outcomes first: the best points go
        self._producer.collect(wait=True)
        self._commit_progress()
        super()._on_revoke(consumer, partitions)

    def _last_words(self) -> None:
        self._commit_progress()

    def _close(self) -> None:
        if self._redeliverer is not None:
            self._redeliverer.close()
        self._redeliverer = None
