"""ShareQueueClient: the QueueClient API over a Kafka share group (KIP-932).

The broker is the tracker: it hands each record to one member, locks it for
the queue's message timeout, counts its deliveries and takes it back when
the member releases it, dies or overruns the lock. What the broker lacks,
this adds on top:

- a DLQ with reasons: reject() and a delivery count over max_redeliveries
  write the record to our DLQ (key, value, headers, timestamp and kmq-id
  kept, ``kmq-dlq-reason`` added) and ACCEPT it only once the broker has the
  letter. So a move is at-least-once: a crash between the two leaves the
  record acquired, it comes back after its lock, and is dead-lettered again
  (the console and redrive know a letter by its source's kmq-id);
- delayed retries: with a backoff, release() schedules a copy through the
  queue's scheduler and ACCEPTs the original, so retries wait as on the kmq
  backend. A lock that expires is the broker's to redeliver, at once;
- per-minute counts on the queue's counts topic (share_counts), for charts.

A share group hands out a member's next batch only once every record of the
previous one is settled (acked, released or rejected); poll() says so
instead of the client's bare IllegalStateException.
"""

import logging
import uuid
from collections.abc import Iterable, Sequence
from functools import partial

from confluent_kafka import (
    AcknowledgeType,
    IllegalStateException,
    KafkaError,
    KafkaException,
    Producer,
    ShareConsumer,
    TopicPartition,
)
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.clock import now_ms
from kmqadmin.kafka.closing import Closing
from kmqadmin.kafka.config import client_config, producer_config
from kmqadmin.kafka.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.record import headers as read_headers
from kmqadmin.kafka.topics import topic_partitions

from . import copies, headers, share_group
from .config import QueueConfig
from .message import Message
from .share_counts import ShareCounts, minute_of

log = logging.getLogger(__name__)

ACCEPT, RELEASE = AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE
LETTER_TIMEOUT_S = 30.0


class UnsettledMessages(RuntimeError):
    """poll() while messages of the previous batch are not yet settled."""


class NoRenew(RuntimeError):
    """extend() on a share queue: the client cannot renew a record's lock."""


class ShareQueueClient(Closing):
    """Same names as QueueClient; ``QueueClient(config)`` returns one of
    these when ``config.backend == "share"``. Not thread-safe (nor is the
    ShareConsumer under it): one per worker thread or process."""

    def __init__(self, config: QueueConfig, max_poll_records: int | None = None) -> None:
        """``max_poll_records``: how many records one fetch acquires at most
        (librdkafka's ``max.poll.records``; its default when None). poll()
        hands them out ``max_messages`` at a time; they are all locked from
        the fetch on, so a smaller fetch suits slow work."""
        self.config = config
        share_group.configure(config)
        settings = {"group.id": config.group_id, "share.acknowledgement.mode": "explicit"}
        if max_poll_records is not None:
            settings["max.poll.records"] = max_poll_records
        self._consumer = ShareConsumer(
            client_config(config.bootstrap_servers, {**settings, **config.kafka_config})
        )
        self._consumer.set_acknowledgement_commit_callback(self._committed)
        self._consumer.subscribe([config.topic])
        self._producer = Producer(
            producer_config(config.bootstrap_servers, extra={"linger.ms": 0, **config.kafka_config})
        )
        self._dlq_partitions = len(topic_partitions(self._producer, config.dlq_topic))
        # The last fetch, acquired, handed out up to _next.
        self._fetched: Sequence[KafkaMessage] = ()
        self._next = 0
        self._acknowledge = self._consumer.acknowledge
        self._id = uuid.uuid4().hex.encode()
        self._counts = ShareCounts(minute_of(now_ms()))
        self._accepted = 0  # acks since the counts were last folded: a bare int, per message
        self.malformed = 0
        self.lost_locks = 0  # acknowledgements the broker refused (lock gone)

    def poll(self, max_messages: int = 500, timeout: float = 1.0) -> list[Message]:
        """Up to ``max_messages`` acquired messages. Records over the delivery
        limit, or whose headers do not decode, go to the DLQ instead."""
        if self._next >= len(self._fetched):
            self._fetch(timeout)
        start = self._next
        batch = self._fetched[start : start + max_messages]
        self._next = start + len(batch)
        messages: list[Message] = []
        append, limit = messages.append, self.config.max_redeliveries + 1
        for record in batch:  # the hot loop: one header read, one Message each
            if (error := record.error()) is not None:
                self._raise_unless_benign(error)
                continue
            try:
                found = read_headers(record)
            except UndecodableRecord as exc:
                self._undecodable(record, exc)
                continue
            count = record.delivery_count() or 1
            if found:
                count += self._copies_before(record, found)
            if count > limit:
                self._to_dlq(record, copies.MAX_REDELIVERIES, "")
                continue
            append(Message(record, count, b"", record.partition()))
        return messages

    def ack(self, message: Message) -> None:
        """Done with it: ACCEPT, sent with the next fetch or flush."""
        self._acknowledge(message._record, ACCEPT)
        self._accepted += 1

    def release(self, message: Message) -> None:
        """Give it back: redelivered with its count + 1, after the backoff if
        the queue has one; a message out of redeliveries goes to the DLQ."""
        if message.delivery_count > self.config.max_redeliveries:
            self._to_dlq(message._record, copies.MAX_REDELIVERIES, "")
        elif self.config.backoff is None or message.value is None:
            self._consumer.acknowledge(message._record, RELEASE)
            self._counts.released += 1
        else:
            out = copies.retry_copy(message._record, message.delivery_count)
            written = partial(self._written, message._record, "delayed")
            copies.schedule_copy(self._producer, self.config, out, on_delivery=written)

    def reject(self, message: Message, reason: str = "") -> None:
        """Poison: to our DLQ with kmq-dlq-reason=rejected, then ACCEPT."""
        self._counts.rejected += 1
        self._to_dlq(message._record, copies.REJECTED, reason)

    def extend(self, message: Message, ms: int) -> None:
        raise NoRenew(
            "a share queue cannot extend a message: KIP-932's RENEW acknowledgement is not in "
            "confluent-kafka's ShareConsumer yet; the lock lasts the queue's message_timeout_ms, "
            "so set that to cover the work (or use the kmq backend)"
        )

    def ack_all(self, messages: Iterable[Message]) -> None:
        """One acknowledge pass for a whole batch; the acknowledgements reach
        the broker together, with the next fetch (or flush), in one request."""
        acknowledge, n = self._consumer.acknowledge, 0
        for message in messages:
            acknowledge(message._record, ACCEPT)
            n += 1
        self._accepted += n

    def release_all(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.release(message)
        self.flush()

    def reject_all(self, messages: Iterable[Message], reason: str = "") -> None:
        """Every letter written, one wait for the broker, then one commit."""
        for message in messages:
            self.reject(message, reason)
        self.flush()

    def flush(self, timeout: float = 30.0) -> None:
        """Waits until the DLQ letters and delayed copies are written and
        every acknowledgement so far is committed."""
        self._settle_letters(timeout)
        self._consumer.commit_sync(timeout)

    def close(self) -> None:
        """Settles what it can, publishes this minute's counts, leaves the
        group (what is still acquired goes back to the broker) and closes."""
        try:
            self.flush()
            self._publish_counts(final=True)
            self._producer.flush(LETTER_TIMEOUT_S)
        finally:
            self._consumer.close()
            self._producer.close()

    # --- internals -----------------------------------------------------

    def _fetch(self, timeout: float) -> None:
        """The next fetch, once the letters of the last one are written (their
        records' ACCEPTs ride with it) and the finished minute's counts out."""
        self._settle_letters()
        self._publish_counts()
        try:
            self._fetched, self._next = self._consumer.poll(timeout), 0
        except IllegalStateException as exc:
            raise UnsettledMessages(
                f"{exc}: a share group hands out the next batch only once every message "
                "of the previous one is acked, released or rejected"
            ) from None

    def _copies_before(self, record: KafkaMessage, found: headers.Headers) -> int:
        """The deliveries before this copy (a delayed retry's header); 0 when
        the header does not decode (counted and logged)."""
        try:
            return headers.decode_count(headers.find(found, headers.REDELIVERY_COUNT))
        except headers.HeaderError as exc:
            self.malformed += 1
            log.warning(
                "%s/%d/%d: %s; counted from the broker's delivery count alone",
                record.topic(),
                record.partition(),
                record.offset(),
                exc,
            )
            return 0

    def _undecodable(self, record: KafkaMessage, exc: UndecodableRecord) -> None:
        self.malformed += 1
        log.warning("%s; to the DLQ, not handed out", exc)
        self._to_dlq(record, UNDECODABLE, "")

    def _to_dlq(self, record: KafkaMessage, reason: str, detail: str) -> None:
        out = copies.dead_letter(record, reason, detail)
        self._producer.produce(
            self.config.dlq_topic,
            key=out.key,
            value=out.value,
            headers=out.headers,
            timestamp=out.timestamp,
            partition=record.partition() % self._dlq_partitions,
            on_delivery=partial(self._written, record, "dead_lettered"),
        )

    def _written(
        self, record: KafkaMessage, counter: str, err: KafkaError | None, _: object
    ) -> None:
        """A letter or delayed copy is on the broker: the original is
        settled. If the write failed, the original is released instead, so
        it comes back and nothing is lost."""
        if err is None:
            self._consumer.acknowledge(record, ACCEPT)
            setattr(self._counts, counter, getattr(self._counts, counter) + 1)
            return
        log.error(
            "%s/%d/%d: could not write it aside (%s); released",
            record.topic(),
            record.partition(),
            record.offset(),
            err.str(),
        )
        self._consumer.acknowledge(record, RELEASE)
        self._counts.released += 1

    def _settle_letters(self, timeout: float = LETTER_TIMEOUT_S) -> None:
        remaining = self._producer.flush(timeout)
        if remaining:
            raise KafkaException(f"{remaining} DLQ letters or delayed copies not written")

    def _publish_counts(self, final: bool = False) -> None:
        """The finished minute's counts (or, closing, the current one's)."""
        minute, counts = minute_of(now_ms()), self._counts
        if minute == counts.minute and not final:
            return
        counts.accepted += self._accepted
        self._accepted = 0
        if counts.any():
            self._producer.produce(self.config.counts_topic, key=self._id, value=counts.encode())
        self._counts = ShareCounts(minute)

    def _committed(self, offsets: dict[TopicPartition, set[int]], error: object) -> None:
        if error is not None:
            n = sum(len(found) for found in offsets.values())
            self.lost_locks += n
            log.warning("%d acknowledgements refused by the broker: %s", n, error)

    @staticmethod
    def _raise_unless_benign(error: KafkaError) -> None:
        if error.code() != KafkaError._PARTITION_EOF:
            raise KafkaException(error)
