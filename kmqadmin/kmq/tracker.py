"""RedeliveryTracker: reads the markers topic and redelivers what nobody acked.

Per assigned markers partition it keeps an OpenSet (packed deadlines and
offsets) and a transactional producer whose id is derived from the
partition, so whichever tracker owns the partition next fences the previous
one. A redelivery or DLQ move is one transaction: the copy, the end marker of
the old copy and the commit of the oldest still-open start marker.
"""

import contextlib
import logging
import time
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.barrier import write_barrier
from kmqadmin.kafka.clock import now_ms
from kmqadmin.kafka.config import consumer_config, producer_config, session_timeout_s
from kmqadmin.kafka.fencing import FencedPartitions, is_fenced
from kmqadmin.kafka.offset_reader import OffsetReader, ReadTimeout
from kmqadmin.kafka.service import Service
from kmqadmin.kafka.topics import topic_partitions
from kmqadmin.scheduler import wire

from . import headers, markers
from .config import QueueConfig
from .copies import Outgoing, next_copy
from .markers import ABSOLUTE_FROM, DEADLINE, KEY, MarkerType
from .open_set import OpenSet
from .stats import TrackerStats

log = logging.getLogger(__name__)


@dataclass
class PartitionState:
    partition: int
    producer: Producer
    next_offset: int  # next markers offset to read
    catch_up_to: int  # one past the barrier marker written at assignment
    open: OpenSet = field(default_factory=OpenSet)
    rejected: dict[int, str] = field(default_factory=dict)  # queue offset -> reason
    committed: int = -1
    last_read: KafkaMessage | None = None  # the newest marker read, for its timestamp

    @property
    def caught_up(self) -> bool:
        """Until the markers present at assignment are read, an old start marker
        may still have its end marker ahead: redelivering then would be false
        (kmq issue #158)."""
        return self.next_offset >= self.catch_up_to


# Timed-out read-backs of one partition in a row before the unread are taken for gone.
READ_ATTEMPTS = 3


class RedeliveryTracker(Service):
    thread_name = "kmq-tracker"

    def __init__(
        self,
        config: QueueConfig,
        batch_size: int = 2000,
        max_wait: float = 0.02,
        commit_interval: float = 1.0,
        read_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        self.config = config
        self.batch_size = batch_size
        self.max_wait = max_wait
        self.commit_interval = commit_interval
        self.read_timeout = read_timeout
        # Per partition: read-backs of the same due batch that timed out in a row.
        self._read_failures: dict[int, int] = {}
        self._states: dict[int, PartitionState] = {}
        self._consumer: Consumer | None = None
        self._reader: OffsetReader | None = None
        self._dlq_partitions = 1
        self._redelivered = self._dead_lettered = self._skipped = 0
        self._lag = 0
        self._fenced = FencedPartitions(session_timeout_s(config.kafka_config))

    # --- lifecycle -----------------------------------------------------

    def serve(self) -> None:
        """Until stop(): consume markers, redeliver what is due, commit."""
        config = self.config
        self._consumer = Consumer(
            consumer_config(config.bootstrap_servers, config.tracker_group_id, config.kafka_config)
        )
        self._reader = OffsetReader(
            config.bootstrap_servers,
            config.topic,
            f"{config.tracker_group_id}__reader",
            config.kafka_config,
            timeout=self.read_timeout,
        )
        try:
            self._dlq_partitions = len(topic_partitions(self._consumer, config.dlq_topic))
            self._consumer.subscribe(
                [config.markers_topic],
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                on_lost=self._on_lost,
            )
            last_commit = time.monotonic()
            while not self._stop.is_set():
                self._apply_batch(self._consumer.consume(self.batch_size, self._wait_time()))
                self._redeliver_due()
                self._revive_fenced()
                if time.monotonic() - last_commit >= self.commit_interval:
                    self._commit_progress()
                    last_commit = time.monotonic()
        finally:
            self._shutdown()

    def stats(self) -> TrackerStats:
        states = list(self._states.values())
        return TrackerStats(
            in_flight=sum(len(s.open) for s in states),
            redelivered=self._redelivered,
            dead_lettered=self._dead_lettered,
            skipped=self._skipped,
            markers_lag=self._lag,
            partitions=tuple(sorted(s.partition for s in states)),
        )

    # --- markers -------------------------------------------------------

    def _apply_batch(self, records: list[KafkaMessage]) -> None:
        """The hot loop: start and end markers take a path with no decoding
        objects; everything else, garbage included, goes through the codec."""
        states, unpack_key, unpack_deadline = self._states, KEY.unpack, DEADLINE.unpack_from
        for record in records:
            if (error := record.error()) is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.warning("markers consumer: %s", error)
                continue
            state = states.get(record.partition())
            if state is None:
                continue
            offset = record.offset()
            state.next_offset = offset + 1
            state.last_read = record
            key, value = record.key(), record.value()
            if key is not None and len(key) == 12 and value:
                partition, queue_offset = unpack_key(key)
                if partition == state.partition:
                    if value[0] == 1 and len(value) == 9:
                        deadline = unpack_deadline(value, 1)[0]
                        if deadline < ABSOLUTE_FROM:  # kmq's timeout; inlined start_deadline
                            deadline += record.timestamp()[1]
                        state.open.start(queue_offset, deadline, offset)
                        continue
                    if value == b"\x00":
                        state.open.end(queue_offset)
                        if state.rejected:
                            state.rejected.pop(queue_offset, None)
                        continue
            self._apply(state, key, value, offset, record.timestamp()[1])

    def _apply(
        self,
        state: PartitionState,
        key: bytes | None,
        value: bytes | None,
        offset: int,
        timestamp: int,
    ) -> None:
        try:
            queue_partition, queue_offset = markers.decode_key(key)
            kind, deadline, extra = markers.decode_value(value)
            if kind is MarkerType.START:
                deadline = markers.start_deadline(deadline, timestamp)
            if queue_partition != state.partition:
                raise markers.MarkerError(
                    f"marker for queue partition {queue_partition} on markers partition "
                    f"{state.partition}"
                )
        except markers.MarkerError as exc:
            self._skipped += 1
            log.warning(
                "skipped marker %s/%d/%d: %s",
                self.config.markers_topic,
                state.partition,
                offset,
                exc,
            )
            return
        self._apply_marker(state, kind, queue_offset, deadline, extra, offset)

    @staticmethod
    def _apply_marker(
        state: PartitionState,
        kind: MarkerType,
        queue_offset: int,
        deadline: int,
        extra: bytes,
        marker_offset: int,
    ) -> None:
        if kind is MarkerType.START:
            state.open.start(queue_offset, deadline, marker_offset)
        elif kind is MarkerType.END:
            state.open.end(queue_offset)
            state.rejected.pop(queue_offset, None)
        elif kind is MarkerType.EXTEND:
            state.open.reschedule(queue_offset, deadline)
        elif kind is MarkerType.REDELIVER_NOW:
            state.open.reschedule(queue_offset, 0)
        elif state.open.reschedule(queue_offset, 0):  # REJECT: due now, to the DLQ
            state.rejected[queue_offset] = extra.decode(errors="replace")

    # --- redelivery ----------------------------------------------------

    def _redeliver_due(self) -> None:
        now = now_ms()
        for state in list(self._states.values()):
            if not state.caught_up:
                continue
            due = state.open.pop_due(self._read_until(state, now), self.batch_size)
            if due:
                self._redeliver(state, due)

    def _read_until(self, state: PartitionState, now: int) -> int:
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

    def _redeliver(self, state: PartitionState, due: list[int]) -> None:
        assert self._reader is not None and self._consumer is not None
        p, config, producer = state.partition, self.config, state.producer
        redelivered = dead = 0
        try:
            originals = self._read_originals(state, due)
            if originals is None:
                return
            producer.begin_transaction()
            for offset in due:
                record = originals.get(offset)
                rejected = state.rejected.pop(offset, None)
                if record is None:
                    self._skipped += 1
                    log.error("%s/%d/%d is gone from the queue topic", config.topic, p, offset)
                else:
                    out = next_copy(record, config.max_redeliveries, rejected)
                    if out.dead_letter:
                        producer.produce(
                            config.dlq_topic,
                            key=out.key,
                            value=out.value,
                            headers=out.headers,
                            timestamp=out.timestamp,
                            partition=p % self._dlq_partitions,
                        )
                        dead += 1
                    else:
                        self._produce_copy(producer, p, out)
                        redelivered += 1
                producer.produce(
                    config.markers_topic,
                    key=markers.encode_key(p, offset),
                    value=markers.END,
                    partition=p,
                )
            commit = state.open.commit_offset(state.next_offset)
            producer.send_offsets_to_transaction(
                [TopicPartition(config.markers_topic, p, commit)],
                self._consumer.consumer_group_metadata(),
            )
            producer.commit_transaction()
        except KafkaException as exc:
            if is_fenced(exc):
                log.warning("partition %d has a newer owner (%s); dropping it", p, exc)
                with contextlib.suppress(KafkaException):
                    producer.abort_transaction(5)
                self._drop([TopicPartition(config.markers_topic, p)])
                self._fenced.add(p)
                return
            # pop_due closed the due entries; the rebuild reopens them from
            # their start markers, so nothing owed is dropped.
            log.warning("redelivery on partition %d failed (%s); rebuilding it", p, exc)
            self._rebuild(state)
            return
        state.committed = commit
        self._redelivered += redelivered
        self._dead_lettered += dead

    def _read_originals(self, state: PartitionState, due: list[int]) -> dict | None:
        """The records to copy; None when the read timed out and the partition
        was rebuilt to try again (pop_due closed the due entries: the rebuild
        reopens them from their start markers). After READ_ATTEMPTS timeouts
        in a row, what is still unread is taken for gone: a start marker for
        an offset past the queue's end (bad input) must not stall the
        partition for ever."""
        assert self._reader is not None
        p = state.partition
        try:
            originals = self._reader.read(p, due)
        except ReadTimeout as exc:
            failures = self._read_failures[p] = self._read_failures.get(p, 0) + 1
            if failures < READ_ATTEMPTS:
                log.warning("%s (attempt %d); rebuilding partition %d", exc, failures, p)
                self._rebuild(state)
                return None
            log.error("%s (attempt %d); the unread ones are taken for gone", exc, failures)
            originals = exc.found
        self._read_failures.pop(p, None)
        return originals

    def _produce_copy(self, producer: Producer, partition: int, out: Outgoing) -> None:
        """The copy goes back to the queue now, or, with a backoff, to the
        scheduler as a schedule that delivers it later. A null value cannot be
        scheduled (it would be a tombstone), so such a copy goes now."""
        config = self.config
        if config.backoff is None or out.value is None:
            producer.produce(
                config.topic, key=out.key, value=out.value, headers=out.headers, partition=partition
            )
            return
        message_id = headers.find(out.headers, headers.MESSAGE_ID) or b""
        producer.produce(
            config.schedules_topic,
            key=b"kmq-retry/%s/%d" % (message_id, out.redelivery),
            value=out.value,
            headers=wire.schedule_headers(
                now_ms() + config.backoff.delay_ms(out.redelivery),
                config.topic,
                out.key,
                out.headers,
            ),
        )

    def _rebuild(self, state: PartitionState) -> None:
        """Forget the partition's state and re-read it from its committed offset.

        The aborted transaction leaves nothing visible (read_committed), so the
        rebuilt open set is exactly what was open before the failed attempt.
        """
        assert self._consumer is not None
        p = state.partition
        try:
            state.producer.flush(5)
            state.producer.abort_transaction(10)
        except KafkaException as exc:
            log.warning("abort on partition %d: %s", p, exc)
        self._states.pop(p, None)
        self._restart_partition(p)

    def _restart_partition(self, partition: int) -> None:
        assert self._consumer is not None
        fresh = self._states[partition] = self._new_state(partition)
        self._consumer.seek(TopicPartition(self.config.markers_topic, partition, fresh.next_offset))

    def _revive_fenced(self) -> None:
        """A fenced partition still assigned after the grace was fenced by
        someone outside the group: take it back (see kafka/fencing.py)."""
        assert self._consumer is not None
        for p in self._fenced.revivable(self._consumer, self._states):
            log.warning("partition %d still ours after a fence; taking it back", p)
            self._restart_partition(p)

    # --- offsets and rebalances ----------------------------------------

    def _commit_progress(self) -> None:
        assert self._consumer is not None
        offsets, lag = [], 0
        for state in self._states.values():
            commit = state.open.commit_offset(state.next_offset)
            if commit != state.committed:
                offsets.append(TopicPartition(self.config.markers_topic, state.partition, commit))
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

    def _new_state(self, partition: int) -> PartitionState:
        assert self._consumer is not None
        tp = TopicPartition(self.config.markers_topic, partition)
        producer = Producer(
            producer_config(
                self.config.bootstrap_servers,
                transactional_id=f"kmq-tracker-{self.config.markers_topic}-{partition}",
                extra=self.config.kafka_config,
            )
        )
        # Fences the previous owner and aborts its open transaction, first: an
        # offset it sent in that transaction keeps committed() waiting
        # (KIP-447 stable offsets) until the transaction ends.
        producer.init_transactions(30)
        low, _ = self._consumer.get_watermark_offsets(tp, timeout=10)
        committed = self._consumer.committed([tp], timeout=10)[0].offset
        start = committed if committed >= 0 else low
        # An end marker for offset -1: no tracker (kmq's included) can take it
        # for a message.
        barrier_key = markers.encode_key(partition, -1)
        barrier = write_barrier(
            producer, self.config.markers_topic, partition, barrier_key, markers.END
        )
        return PartitionState(partition, producer, start, barrier + 1, committed=start)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self._fenced.discard(tp.partition)
            self._states[tp.partition] = self._new_state(tp.partition)
        log.info("tracker assigned %s", sorted(tp.partition for tp in partitions))

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._commit_progress()
        self._drop(partitions)

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._drop(partitions)

    def _drop(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self._fenced.discard(tp.partition)
            state = self._states.pop(tp.partition, None)
            if state is not None:
                with contextlib.suppress(KafkaException):  # a fenced producer raises
                    state.producer.flush(5)

    def _wait_time(self) -> float:
        """Sleep in consume() no longer than until the next deadline."""
        deadlines = [d for s in self._states.values() if (d := s.open.next_deadline()) is not None]
        if not deadlines:
            return self.max_wait
        return min(self.max_wait, max(0.0, (min(deadlines) - now_ms()) / 1000))

    def _shutdown(self) -> None:
        """Releases this life's clients, also after a crash, so a restart
        starts clean."""
        try:
            if self._consumer is not None:
                try:
                    self._commit_progress()
                finally:
                    self._consumer.close()
        finally:
            for state in self._states.values():
                state.producer.flush(5)
            self._states.clear()
            if self._reader is not None:
                self._reader.close()
            self._consumer = self._reader = None
