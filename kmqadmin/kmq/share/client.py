"""ShareQueueClient: the QueueClient API over a Kafka share group (KIP-932).

The broker is the tracker: it hands each record to one member, locks it for
the queue's message timeout, counts its deliveries and takes it back when
the member releases it, dies or overruns the lock. Our consumer
(kafka.share_consumer, share_acquire_mode "record_limit", the default)
acquires exactly what poll() asks for, so a slow worker never holds records
it has not seen, and every delivery the broker counts is one the worker was
handed; "batch_optimized" runs on librdkafka's consumer instead, for fast
work (see QueueConfig). What the broker lacks, this adds:

- a DLQ with reasons: reject() and a delivery count over max_redeliveries
  write the record to our DLQ (key, value, headers, timestamp and kmq-id
  kept, ``kmq-dlq-reason`` added) and ACCEPT it only once the broker has the
  letter. So a move is at-least-once: a crash between the two leaves the
  record acquired, it comes back after its lock, and is dead-lettered again
  (the console and redrive know a letter by its source's kmq-id);
- delayed retries: with a backoff, release() schedules a copy through the
  queue's scheduler and ACCEPTs the original, so retries wait as on the kmq
  backend. A lock that expires is the broker's to redeliver, at once;
- honest acknowledgements (kmq.locks): an ack, release, reject or extend of
  a message whose lock is gone raises LockExpired; acknowledgements the
  broker refuses raise AcksRefused, each message named;
- per-minute counts on the queue's counts topic (share_counts), for charts.
"""

import logging
from collections.abc import Callable, Iterable
from functools import partial

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.closing import Closing
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kafka.client.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kafka.share_consumer.acknowledgements import Refusal
from kmqadmin.kafka.share_consumer.batch_optimized import BatchOptimizedConsumer
from kmqadmin.kafka.share_consumer.consumer import ShareConsumer
from kmqadmin.kafka.share_consumer.errors import ShareConsumerError
from kmqadmin.kafka.share_consumer.leases import ACCEPT, RELEASE
from kmqadmin.kmq import copies, headers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.locks import AcksRefused, LockExpired, describe
from kmqadmin.kmq.message import Message
from kmqadmin.kmq.share.counts import ShareCounts, minute_of

log = logging.getLogger(__name__)

LETTER_TIMEOUT_S = 30.0


class ShareQueueClient(Closing):
    """Same names as QueueClient; ``QueueClient(config)`` returns one of
    these when ``config.backend == "share"``. Not thread-safe: one per
    worker thread or process."""

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        share_group.configure(config)
        self._producer = Producer(
            producer_config(config.bootstrap_servers, extra={"linger.ms": 0, **config.kafka_config})
        )
        self._dlq_partitions = len(topic_partitions(self._producer, config.dlq_topic))
        # Last: from here on the consumer is a group member, with partitions
        # nobody else is handed until it leaves (close()).
        self._consumer = _consumer(config)
        self._id = self._consumer.member_id.encode()  # the counts' key
        self._reported = (0, 0, 0)  # acquired, refused, expired when last published
        self._counts = ShareCounts(minute_of(now_ms()))
        self._accepted = 0  # acks since the counts were last folded: a bare int, per message
        self.malformed = 0
        self.refused_acks = 0  # acknowledgements the broker refused
        self.expired_locks = 0  # acknowledgements found too late, before sending
        self.refused_commits = 0  # QueueClient's name: a share group commits no offsets

    def poll(self, max_messages: int = 500, timeout: float = 1.0) -> list[Message]:
        """Up to ``max_messages`` newly acquired messages: no more are
        acquired, so each is locked from here for the queue's message
        timeout. Records over the delivery limit, or whose headers do not
        decode, go to the DLQ instead. Sends the acknowledgements made since
        the last call first, and raises AcksRefused for those refused."""
        self._settle(wait=False)
        self._publish_counts()
        records = self._consumer.poll(max_messages, timeout)
        messages: list[Message] = []
        append, limit = messages.append, self.config.max_redeliveries + 1
        for record in records:  # the hot loop: one header read, one Message each
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
            append(Message(record, count, record.partition(), record.offset()))
        return messages

    def ack(self, message: Message) -> None:
        """Done with it: ACCEPT, sent with the next poll or flush.
        LockExpired if its lock has run out."""
        self._held(message, "acking")
        self._consumer.acknowledge(message._record, ACCEPT)
        self._accepted += 1

    def release(self, message: Message) -> None:
        """Give it back: redelivered with its count + 1, after the backoff if
        the queue has one; a message out of redeliveries goes to the DLQ."""
        self._held(message, "releasing")
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
        self._held(message, "rejecting")
        self._counts.rejected += 1
        self._to_dlq(message._record, copies.REJECTED, reason)

    def extend(self, message: Message, ms: int) -> None:
        """Keeps the message locked ``ms`` longer: the broker renews its lock
        (RENEW) for the group's lock duration, the queue's message_timeout_ms,
        so ``ms`` may not exceed that; extend again to hold it longer.
        LockExpired when the lock is already gone."""
        if not 0 < ms <= self.config.message_timeout_ms:
            raise ValueError(
                f"a share queue renews a lock for its message_timeout_ms "
                f"({self.config.message_timeout_ms} ms) at most; got {ms} ms"
            )
        self._held(message, "extending")
        try:
            refused = self._consumer.renew([message._record])
        except ShareConsumerError as exc:  # batch_optimized: no RENEW
            raise NotImplementedError(str(exc)) from None
        for refusal in refused:
            if refusal.unknown:
                raise TimeoutError(
                    f"extending {describe(message)}: {refusal.reason}; the lock may or may "
                    "not have been renewed"
                )
            self.refused_acks += 1
            raise LockExpired(message, "extending", refusal.reason)

    def ack_all(self, messages: Iterable[Message]) -> None:
        """Accepts a whole batch and sends it at once, in one request per
        lock (see kafka.share_consumer.leases). AcksRefused names the
        messages whose locks had run out or the broker refused; the others
        took."""
        batch = list(messages)
        records = [m._record for m in batch]
        stale = self._consumer.stale(records)
        late: list[tuple[Message, str]] = []
        if stale:
            ids = {id(r) for r in stale}
            late = [(m, "lock expired before the ack") for m in batch if id(m._record) in ids]
            records = [r for r in records if id(r) not in ids]
        self._consumer.acknowledge_all(records, ACCEPT)
        self._accepted += len(records)
        self.expired_locks += len(late)
        self._settle(late, wait=False)

    def release_all(self, messages: Iterable[Message]) -> None:
        """Releases each, then waits for the broker; AcksRefused names those
        whose locks had run out or were refused, the others took."""
        self._settle(_each(messages, self.release))

    def reject_all(self, messages: Iterable[Message], reason: str = "") -> None:
        """Every letter written, one wait for the broker, then one commit;
        AcksRefused as release_all."""
        self._settle(_each(messages, partial(self.reject, reason=reason)))

    def flush(self, timeout: float = 30.0) -> None:
        """Waits until the DLQ letters and delayed copies are written and
        every acknowledgement so far is answered; AcksRefused for those
        refused."""
        self._settle(timeout=timeout, wait=True)

    def close(self) -> None:
        """Settles what it can, publishes this minute's counts, leaves the
        group (what is still acquired goes back to the broker) and closes."""
        try:
            self.flush()
        finally:
            try:
                self._publish_counts(final=True)
                self._producer.flush(LETTER_TIMEOUT_S)
                # ACCEPTs that letters written just now queued: sent, not dropped.
                for refusal in self._consumer.flush():
                    record = refusal.record
                    log.warning(
                        "closing: %s/%d/%d not acknowledged: %s",
                        record.topic(),
                        record.partition(),
                        record.offset(),
                        refusal.reason,
                    )
            finally:
                self._consumer.close()

    # --- internals -----------------------------------------------------

    def _held(self, message: Message, doing: str) -> None:
        if self._late(message):
            raise LockExpired(message, doing)

    def _late(self, message: Message) -> bool:
        """True, counted and forgotten, when the message's lock has run out
        (or it is not held: acknowledged already, or refused)."""
        lease = self._consumer.lease(message._record)
        if lease is not None and not lease.expired:
            return False
        self.expired_locks += 1
        return True

    def _settle(
        self,
        late: list[tuple[Message, str]] | None = None,
        timeout: float = LETTER_TIMEOUT_S,
        wait: bool = True,
    ) -> None:
        """Letters written, acknowledgements sent; AcksRefused for ``late``
        and whatever the broker refused. ``wait`` False lets a consumer that
        sends acknowledgements with its next fetch (batch_optimized) do so."""
        remaining = self._producer.flush(timeout)
        if remaining:
            raise KafkaException(f"{remaining} DLQ letters or delayed copies not written")
        refused = list(late or ())
        for refusal in self._consumer.flush(wait):
            refused.append((_message_of(refusal), refusal.reason))
            self.refused_acks += not refusal.unknown
        if refused:
            raise AcksRefused(refused)

    def _copies_before(self, record: KafkaMessage, found: headers.Headers) -> int:
        """The deliveries before this copy (a delayed retry's header); 0 when
        the header does not decode (counted and logged)."""
        try:
            return headers.decode_count(headers.find(found, headers.REDELIVERY_COUNT))
        except headers.HeaderError as exc:
            log.warning(
                "%s/%d/%d: %s; counted from the broker's delivery count alone",
                record.topic(),
                record.partition(),
                record.offset(),
                exc,
            )
            self.malformed += 1
            return 0

    def _undecodable(self, record: KafkaMessage, exc: UndecodableRecord) -> None:
        log.warning("%s; to the DLQ, not handed out", exc)
        self.malformed += 1
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

    def _publish_counts(self, final: bool = False) -> None:
        """The finished minute's counts (or, closing, the current one's)."""
        minute, counts = minute_of(now_ms()), self._counts
        if minute == counts.minute and not final:
            return
        counts.accepted += self._accepted
        self._accepted = 0
        now = (self._consumer.acquired, self.refused_acks, self.expired_locks)
        counts.acquired, counts.refused, counts.expired = (
            a - b for a, b in zip(now, self._reported, strict=True)
        )
        self._reported = now
        counts.in_flight = self._consumer.held
        if counts.any():
            self._producer.produce(self.config.counts_topic, key=self._id, value=counts.encode())
        self._counts = ShareCounts(minute)


def _each(messages: Iterable[Message], settle: Callable[[Message], None]) -> list:
    """``settle`` applied to every message; (message, why) for those whose
    lock had run out, so one stale message does not stop the batch."""
    late = []
    for message in messages:
        try:
            settle(message)
        except LockExpired:
            late.append((message, "lock expired before the ack"))
    return late


def _consumer(config: QueueConfig) -> ShareConsumer | BatchOptimizedConsumer:
    if config.share_acquire_mode == "batch_optimized":
        return BatchOptimizedConsumer(
            config.bootstrap_servers,
            config.group_id,
            config.topic,
            config.message_timeout_ms,
            config.kafka_config,
        )
    return ShareConsumer(
        config.bootstrap_servers, config.group_id, config.topic, config.kafka_config
    )


def _message_of(refusal: Refusal) -> Message:
    """The message a refused acknowledgement was for, to name it."""
    record = refusal.record
    return Message(record, record.delivery_count() or 1, record.partition(), record.offset())
