"""QueueClient: consume with per-message acknowledgement (kmq's steps 1-5).

In kmq's marker format:

1. poll a batch from the queue topic;
2. write a start marker per message (due a message timeout after it);
3. wait once, for the whole batch, until the broker has every start marker;
4. commit the batch's offsets;
5. hand the messages out; ack/release/reject/extend write markers async.

A crash after 4 leaves start markers with no end: the tracker redelivers.

In the compact format (the default), step 2 writes a start range per run of
consecutive offsets of a partition, and steps 3 and 4 trail: the batch is
handed out at once, and its offsets are committed by a later poll once the
broker has acknowledged its start ranges (started_batches.py). A crash
before that leaves the offsets uncommitted: the messages are read and
delivered again, as after any refused commit. Acks within a moment of each
other become one end range per run (ack_window.py).
"""

import logging
import threading
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.broker_watch import (
    BrokerWatch,
    abandon,
    close_or_abandon,
    if_current,
)
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.closing import Closing
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.client.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import headers, markers
from kmqadmin.kmq.client.ack_window import AckWindow
from kmqadmin.kmq.client.marker_producer import MarkerProducer
from kmqadmin.kmq.client.offset_commits import COMMIT_TIMEOUT_S, OffsetCommits
from kmqadmin.kmq.client.started_batches import StartedBatches
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.message import Message

log = logging.getLogger(__name__)

# Marks a record whose headers do not decode as rejected the moment it is
# started: the tracker moves it to the DLQ, crash-safely, as any rejected one.
_REJECT_UNDECODABLE = markers.reject(UNDECODABLE)


class QueueClient(Closing):
    """Per-message acknowledgement on the kmq backend; for a queue whose
    ``backend`` is "share", QueueClient(config) is a ShareQueueClient, which
    has the same names (share_client)."""

    def __new__(cls, config: QueueConfig) -> Any:
        if config.backend == "share":
            from kmqadmin.kmq.share.client import (
                ShareQueueClient,  # the share backend imports this module
            )

            return ShareQueueClient(config)
        return super().__new__(cls)

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._compact = config.marker_format == "compact"
        self._started = StartedBatches()
        self._markers = MarkerProducer(config, self._compact)
        self._acks = AckWindow(self._write_ends)
        self._consumer, self._watch = self._subscribed_consumer()
        self._commits = OffsetCommits(config.topic)
        self.malformed = 0

    @property
    def refused_commits(self) -> int:
        """Commits of started messages the group refused or never answered
        (offset_commits.py): a caller that has not handed those out yet
        should not, as their next reader delivers them again (receivers.py)."""
        return self._commits.refused

    def _arrived(self, max_messages: int, timeout: float) -> list[KafkaMessage]:
        """What has arrived, up to ``max_messages``, as soon as anything has:
        librdkafka's ``consume`` waits until it holds ``max_messages`` or the
        timeout passes, so on a quiet queue a worker got each message up to
        ``timeout`` late (bench/kmq_throughput.py: redelivered copies reached
        the worker a second after their deadline). Only the first is waited for."""
        records = self._consumer.consume(max_messages, 0)
        if records or timeout <= 0:
            return records
        if (first := self._consumer.poll(timeout)) is None:
            return []
        more = self._consumer.consume(max_messages - 1, 0) if max_messages > 1 else []
        return [first, *more]

    def poll(self, max_messages: int = 500, timeout: float = 1.0) -> list[Message]:
        """Up to ``max_messages`` messages, each with its start marker written
        (kmq's format) or on its way (compact; see the module's docstring)."""
        if self._watch.lost():
            self._replace_consumer(
                f"has had no broker or group for {self._watch.down_for_s():.0f} s"
            )
        if self._compact:
            self._settle_started()
        records = self._arrived(max_messages, timeout)
        if not records:
            return []
        handed: dict[int, list[int]] = {}  # partition -> offsets started, in order
        rejects: dict[int, list[dict]] = {}
        messages: list[Message] = []
        offsets, current, first, deleted = [], -1, -1, 0
        for record in records:
            if (error := record.error()) is not None:
                self._raise_unless_benign(error)
                continue
            partition, offset = record.partition(), record.offset()
            if partition != current:
                offsets, current = handed.setdefault(partition, []), partition
                first = self._log_start(partition)
            if offset < first:
                deleted += 1
                continue
            offsets.append(offset)
            try:
                record_headers = read_headers(record)
            except UndecodableRecord as exc:
                rejects.setdefault(partition, []).append(
                    {"value": _REJECT_UNDECODABLE, "key": markers.encode_key(partition, offset)}
                )
                self._undecodable(exc)
                continue
            count = self._delivery_count(record, record_headers) if record_headers else 1
            messages.append(Message(record, count, partition, offset))
        if deleted:
            log.info(
                "%s: %d records deleted since they were fetched, skipped",
                self.config.topic,
                deleted,
            )
            handed = {p: offsets for p, offsets in handed.items() if offsets}
        if self._compact:
            self._start_ranges(handed)
            self._markers.batches(rejects, "reject")
        else:
            self._start_each(handed, rejects)
        return messages

    def ack(self, message: Message) -> None:
        """Done with it: an end marker; the tracker forgets the message."""
        if self._compact:
            self._acks.add(message.partition, message.offset)
            return
        self._markers.produce(message.partition, message.marker_key, markers.END)

    def release(self, message: Message) -> None:
        """Give it back now: redelivered at once, counting as a delivery."""
        self._markers.for_message(message, markers.REDELIVER_NOW)

    def reject(self, message: Message, reason: str = "") -> None:
        """Poison: to the DLQ now with kmq-dlq-reason=rejected."""
        self._markers.for_message(message, markers.reject(reason))

    def extend(self, message: Message, ms: int) -> None:
        """Keep it longer: the deadline becomes now + ``ms`` (SQS's visibility)."""
        self._markers.for_message(message, markers.extend(now_ms() + ms))

    def ack_all(self, messages: Iterable[Message]) -> None:
        """ack() for a whole batch: an end range per run (compact), or one
        produce_batch call per partition (kmq's format)."""
        if not self._compact:
            self._markers.for_all(messages, markers.END, "end")
            return
        by_partition: dict[int, list[int]] = {}
        for message in messages:
            by_partition.setdefault(message.partition, []).append(message.offset)
        for partition, offsets in by_partition.items():
            self._write_ends(partition, offsets)

    def release_all(self, messages: Iterable[Message]) -> None:
        self._markers.for_all(messages, markers.REDELIVER_NOW, "release")

    def reject_all(self, messages: Iterable[Message], reason: str = "") -> None:
        self._markers.for_all(messages, markers.reject(reason), "reject")

    def return_unseen(self, messages: Iterable[Message]) -> None:
        """Give back what no one was handed: redelivered now, as by
        release_all, but with its delivery count kept (RETURN). The compact
        format's only: kmq's tracker would read the marker as an ack."""
        if not self._compact:
            raise ValueError("return_unseen needs the compact marker format")
        self._markers.for_all(messages, markers.RETURN, "return")

    def flush(self, timeout: float = 30.0) -> None:
        """Waits until every marker written so far is on the broker (and, in
        the compact format, commits what their start ranges cover)."""
        self._acks.flush()
        self._markers.await_all(timeout)
        if self._compact:
            self._settle_started(wait=True)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._acks.close()
            self._commits.close()
            close_or_abandon(self._consumer, self._watch)

    # --- internals -----------------------------------------------------

    def _subscribed_consumer(self) -> tuple[Consumer, BrokerWatch]:
        config, watch = self.config, BrokerWatch()
        consumer = Consumer(
            consumer_config(
                config.bootstrap_servers,
                config.group_id,
                {**config.kafka_config, **watch.settings()},
            )
        )
        consumer.subscribe(
            [config.topic],
            on_revoke=if_current(lambda: self._consumer, self._revoked),
            on_lost=if_current(lambda: self._consumer, self._lost),
        )
        return consumer, watch

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Before the partitions go: what their start ranges cover is
        committed, so their next reader does not deliver it again."""
        if not self._compact:
            return
        self._acks.flush()
        self._markers.flush(10)
        try:
            self._settle_started()
        except KafkaException as exc:  # not raised inside a rebalance: said here
            log.warning("%s: before a rebalance: %s", self.config.topic, exc)
        self._started.forget(tp.partition for tp in partitions)

    def _lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._started.forget(tp.partition for tp in partitions)

    def _log_start(self, partition: int) -> int:
        """The partition's first offset as the last fetch reply gave it. A
        record polled below it was deleted after it was fetched (a purge's
        DeleteRecords, retention): it is gone for everyone, so not handed out."""
        tp = TopicPartition(self.config.topic, partition)
        try:
            return self._consumer.get_watermark_offsets(tp, cached=True)[0]
        except KafkaException:  # not known yet: nothing is known deleted
            return -1

    def _start_each(self, handed: dict[int, list[int]], rejects: dict[int, list[dict]]) -> None:
        """kmq's steps 2-4: a start marker per message, one wait, one commit."""
        start, pack = markers.start(self.config.message_timeout_ms), markers.KEY.pack
        starts = {p: [{"value": start, "key": pack(p, o)} for o in os] for p, os in handed.items()}
        self._markers.batches(starts, "start")
        self._markers.batches(rejects, "reject")
        self._markers.await_all()
        if handed:
            self._commit({p: offsets[-1] + 1 for p, offsets in handed.items()})

    def _start_ranges(self, handed: dict[int, list[int]]) -> None:
        """The compact format's step 2: a start range per run of consecutive
        offsets, each reporting its delivery to _started."""
        timeout = self.config.message_timeout_ms
        produce, one = self._markers.produce, markers.start(timeout)
        for partition, offsets in handed.items():
            spans = markers.spans(offsets)
            delivered = self._started.add(partition, offsets[0], offsets[-1] + 1, len(spans))
            for first, last in spans:
                value = markers.start_range(timeout, last) if last > first else one
                key = markers.encode_key(partition, first)
                produce(partition, key, value, delivered)

    def _settle_started(self, wait: bool = False) -> None:
        """The compact format's trailing steps 3 and 4: commits the batches
        whose start ranges are written; a partition whose start range failed
        is read again from that batch. ``wait``: a synchronous commit."""
        self._markers.serve()
        if self._markers.failed:
            self._markers.await_all(0)  # raises, saying which
        ready = self._started.ready()
        for partition, (offset, why) in ready.rewinds.items():
            log.warning(
                "%s/%d: start markers not written (%s); reading again from offset %d",
                self.config.topic,
                partition,
                why,
                offset,
            )
            try:
                self._consumer.seek(TopicPartition(self.config.topic, partition, offset))
            except KafkaException as exc:  # no longer ours: its next reader starts there
                log.warning("%s/%d: not read again here (%s)", self.config.topic, partition, exc)
        if not ready.commits:
            return
        if wait:
            self._commit(ready.commits)
            return
        offsets = [TopicPartition(self.config.topic, p, o) for p, o in ready.commits.items()]
        try:
            self._consumer.commit(offsets=offsets, asynchronous=True)
        except KafkaException as exc:  # nothing lost: the next reader delivers them again
            log.warning("%s: offsets not committed (%s)", self.config.topic, exc)

    def _write_ends(self, partition: int, offsets: list[int]) -> None:
        """The compact format's acks: an end range per run, END for a run of one."""
        for first, value in markers.ends(offsets, compact=True):
            self._markers.produce(partition, markers.encode_key(partition, first), value)

    def _replace_consumer(self, why: str, call: threading.Thread | None = None) -> None:
        """A consumer that has had no broker, or been out of its group, for a
        while may never get back (kafka/client/broker_watch.py): a new one
        joins the group. What the old one handed out stays in flight (its
        start markers are written); offsets it could not commit are read
        again, as after any refused commit. The old one is closed on a
        thread of its own, since closing a client in that state may never
        return; ``call``: one still inside it, which returns first."""
        log.warning("%s: this worker's consumer %s; replacing it", self.config.topic, why)
        old = self._consumer
        self._started = StartedBatches()  # the old one's batches: read again by the next reader
        self._consumer, self._watch = self._subscribed_consumer()
        abandon(old, after=call)

    def _commit(self, commits: dict[int, int]) -> None:
        """Step 4; a consumer whose commit got no answer is replaced."""
        hung = self._commits.commit(self._consumer, commits)
        if hung is not None:
            no_answer = f"had no answer to an offset commit in {COMMIT_TIMEOUT_S:.0f} s"
            self._replace_consumer(no_answer, hung)

    def _undecodable(self, exc: UndecodableRecord) -> None:
        log.warning("%s; rejected, not handed out", exc)
        self.malformed += 1

    def _delivery_count(self, record: KafkaMessage, record_headers: headers.Headers) -> int:
        claimed = headers.find(record_headers, headers.MESSAGE_ID)
        if claimed is not None and not headers.is_message_id(claimed):
            self._malformed(record, f"{headers.MESSAGE_ID} {claimed[:100]!r} is no kmq-id; ignored")
        try:
            return headers.decode_count(headers.find(record_headers, headers.REDELIVERY_COUNT)) + 1
        except headers.HeaderError as exc:
            self._malformed(record, f"{exc}; treated as a first delivery")
            return 1

    def _malformed(self, record: KafkaMessage, why: str) -> None:
        """Counted and logged with its coordinates; the message is delivered
        all the same (its id is then its own coordinates: Message.id). Logged
        first: whoever sees the count finds the coordinates in the log."""
        log.warning("%s/%d/%d: %s", record.topic(), record.partition(), record.offset(), why)
        self.malformed += 1

    @staticmethod
    def _raise_unless_benign(error: KafkaError) -> None:
        if error.code() != KafkaError._PARTITION_EOF:
            raise KafkaException(error)
