"""The redelivery transaction: what the tracker writes for a partition's due messages.

A redelivery or DLQ move is part of one transaction of the tracker's
producer: the copy (or the dead letter), the end marker of the old copy and
the commit of the oldest still-open start marker, with the closed offsets
as its metadata. A tracker that crashes half-way leaves nothing visible
(queue consumers read ``read_committed``), so it never duplicates a copy,
and the next owner rebuilds the open set from the committed offset.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from confluent_kafka import Message as KafkaMessage
from confluent_kafka import Producer

from kmqadmin.kafka.admin.offset_reader import OffsetReader, ReadTimeout
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import markers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.copies import Outgoing, next_copy, schedule_copy
from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition

log = logging.getLogger(__name__)

# Timed-out read-backs of one partition in a row before the unread are taken for gone.
READ_ATTEMPTS = 3
# Originals are read this long before they are due (a tenth of the message
# timeout when that is shorter), every quarter of it (read_ahead).
READ_AHEAD_MS = 200


@dataclass(frozen=True, slots=True)
class Sent:
    """What one committed redelivery transaction did."""

    redelivered: int
    dead_lettered: int
    gone: int  # due, but no longer in the queue topic: skipped
    undecodable: int  # of the dead-lettered, those whose headers do not decode

    def __add__(self, other: "Sent") -> "Sent":
        return Sent(
            self.redelivered + other.redelivered,
            self.dead_lettered + other.dead_lettered,
            self.gone + other.gone,
            self.undecodable + other.undecodable,
        )


@dataclass
class DueBatch[S: TrackedPartition]:
    """A turn's due messages, partition by partition: one transaction."""

    parts: list[tuple[S, list[int], dict[int, KafkaMessage]]]
    sent: list[Sent] = field(default_factory=list)

    def write(self, redeliverer: "Redeliverer", producer: Producer) -> None:
        for state, due, originals in self.parts:
            self.sent.append(redeliverer.produce(state, producer, due, originals))


class Redeliverer:
    def __init__(self, config: QueueConfig, read_timeout: float) -> None:
        self.config = config
        self.dlq_partitions = 1  # the owner sets it once it has asked the broker
        self._reader = OffsetReader(
            config.bootstrap_servers,
            config.topic,
            f"{config.tracker_group_id}__reader",
            config.kafka_config,
            timeout=read_timeout,
        )
        # Per partition: read-backs of the same due batch that timed out in a row.
        self._read_failures: dict[int, int] = {}
        self.read_ahead_ms = min(READ_AHEAD_MS, config.message_timeout_ms // 10)
        self._last_read_ahead = 0
        # Per partition: originals read ahead of their deadline (read_soon);
        # None for an offset read and not found, which is read again when due.
        self._ahead: dict[int, dict[int, KafkaMessage | None]] = {}

    def close(self) -> None:
        self._reader.close()

    def read_ahead(self, states: Iterable[TrackedPartition], limit: int) -> None:
        """Every quarter of the read-ahead, has the originals of what falls
        due within it read now (up to ``limit`` a partition)."""
        now = now_ms()
        if now - self._last_read_ahead < self.read_ahead_ms // 4:
            return
        self._last_read_ahead, until = now, now + self.read_ahead_ms
        self.read_soon({s.partition: s.open.due_by(until, limit) for s in states})

    def read_soon(self, soon: dict[int, list[int]]) -> None:
        """Reads the originals of the messages due soon (partition -> open
        offsets), so that when they are due the redelivery waits on no read:
        in a burst of deadlines a read per turn put tens of milliseconds on
        every later copy. Holds only what ``soon`` names: what was acked
        meanwhile, or belongs to a partition no longer owned, is let go."""
        ahead: dict[int, dict[int, KafkaMessage | None]] = {}
        for partition, offsets in soon.items():
            held = self._ahead.get(partition, {})
            kept = {o: held[o] for o in offsets if o in held}
            if missing := [o for o in offsets if o not in held]:
                try:
                    found = self._reader.read(partition, missing)
                except ReadTimeout as exc:  # read again when due, with its retries
                    found = exc.found
                kept.update((o, found.get(o)) for o in missing)
            ahead[partition] = kept
        self._ahead = ahead

    def read_originals(self, partition: int, due: list[int]) -> dict[int, KafkaMessage] | None:
        """The records to copy; None when the read timed out and the caller
        must rebuild the partition to try again (pop_due closed the due
        entries: the rebuild reopens them from their start markers). After
        READ_ATTEMPTS timeouts in a row, what is still unread is taken for
        gone: a start marker for an offset past the queue's end (bad input)
        must not stall the partition for ever."""
        p, held = partition, self._ahead.get(partition, {})
        originals = {o: record for o in due if (record := held.pop(o, None)) is not None}
        if unread := [o for o in due if o not in originals]:
            try:
                originals.update(self._reader.read(p, unread))
            except ReadTimeout as exc:
                failures = self._read_failures[p] = self._read_failures.get(p, 0) + 1
                if failures < READ_ATTEMPTS:
                    log.warning("%s (attempt %d); rebuilding partition %d", exc, failures, p)
                    return None
                log.error("%s (attempt %d); the unread ones are taken for gone", exc, failures)
                originals.update(exc.found)
        self._read_failures.pop(p, None)
        return originals

    def produce(
        self,
        state: TrackedPartition,
        producer: Producer,
        due: list[int],
        originals: dict[int, KafkaMessage],
    ) -> Sent:
        """Copies or dead-letters each due message and ends its old copy, in
        the transaction the caller opened."""
        p, config = state.partition, self.config
        redelivered = dead = gone = undecodable = 0
        for offset in due:
            record = originals.get(offset)
            rejected = state.rejected.pop(offset, None)
            unseen = offset in state.returned
            state.returned.discard(offset)
            if record is None:
                gone += 1
                log.error("%s/%d/%d is gone from the queue topic", config.topic, p, offset)
            elif (out := next_copy(record, config.max_redeliveries, rejected, unseen)).dead_letter:
                dead += 1
                self._dead_letter(producer, p, out)
                if out.undecodable:
                    undecodable += 1
                    log.error("%s/%d/%d: headers undecodable, to the DLQ", config.topic, p, offset)
            else:
                redelivered += 1
                self._produce_copy(producer, p, out, now=unseen)
        self._end(producer, p, due)
        return Sent(redelivered, dead, gone, undecodable)

    def _end(self, producer: Producer, partition: int, due: list[int]) -> None:
        """Ends the old copies: kmq's END each, or in the compact format an
        end range per run (a due poll batch is one run: one record)."""
        for offset, value in markers.ends(due, self.config.marker_format == "compact"):
            producer.produce(
                self.config.markers_topic,
                key=markers.encode_key(partition, offset),
                value=value,
                partition=partition,
            )

    def _dead_letter(self, producer: Producer, partition: int, out: Outgoing) -> None:
        producer.produce(
            self.config.dlq_topic,
            key=out.key,
            value=out.value,
            headers=out.headers,
            timestamp=out.timestamp,
            partition=partition % self.dlq_partitions,
        )

    def _produce_copy(
        self, producer: Producer, partition: int, out: Outgoing, now: bool = False
    ) -> None:
        """The copy goes back to the queue now, or, with a backoff, to the
        scheduler as a schedule that delivers it later. A null value cannot be
        scheduled (it would be a tombstone), so such a copy goes now, as does
        one no one saw (``now``): it was no attempt to back off from."""
        config = self.config
        if now or config.backoff is None or out.value is None:
            producer.produce(
                config.topic, key=out.key, value=out.value, headers=out.headers, partition=partition
            )
            return
        schedule_copy(producer, config, out)
