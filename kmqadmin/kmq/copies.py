"""What a due message becomes: a redelivered copy, or a dead letter."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from confluent_kafka import KafkaError, Producer
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import headers
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.draft import Draft
from kmqadmin.kmq.headers import Headers
from kmqadmin.scheduler import wire

DeliveryCallback = Callable[[KafkaError | None, KafkaMessage], None]

MAX_REDELIVERIES = "max-redeliveries"
REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A record to produce inside the redelivery transaction."""

    dead_letter: bool
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int  # 0: let the producer stamp it
    redelivery: int  # the copy's kmq-redelivery-count (unused for a dead letter)
    undecodable: bool = False  # dead-lettered because its headers do not decode


def next_copy(
    record: KafkaMessage, max_redeliveries: int, rejected: str | None, unseen: bool = False
) -> Outgoing:
    """The copy with kmq-redelivery-count + 1, or the DLQ record once it is used up.

    ``rejected`` is the reject reason when a worker rejected the message (""
    when it gave none), None otherwise. ``unseen``: a delivery no one was
    handed (RETURN), whose copy keeps its count.
    """
    try:
        original = read_headers(record) or []
    except UndecodableRecord as exc:
        return _undecodable(exc)
    stable_id = headers.stable_id(original, record.topic(), record.partition(), record.offset())
    try:
        count = headers.decode_count(headers.find(original, headers.REDELIVERY_COUNT))
    except headers.HeaderError as exc:
        return _dead(record, original, stable_id, UNDECODABLE, str(exc))
    if rejected is not None:
        return _dead(record, original, stable_id, REJECTED, rejected)
    if unseen:
        return _copy(record, original, stable_id, count)
    if count >= max_redeliveries:
        return _dead(record, original, stable_id, MAX_REDELIVERIES, "")
    return _copy(record, original, stable_id, count + 1)


def retry_copy(record: KafkaMessage, redelivery: int) -> Outgoing:
    """The copy that is redelivery number ``redelivery`` of a record whose
    headers decode (the share backend counts deliveries itself)."""
    original = read_headers(record) or []
    stable_id = headers.stable_id(original, record.topic(), record.partition(), record.offset())
    return _copy(record, original, stable_id, redelivery)


def dead_letter(record: KafkaMessage, reason: str, detail: str = "") -> Outgoing:
    """The DLQ record for ``record`` with ``reason``, whatever its headers."""
    try:
        original = read_headers(record) or []
    except UndecodableRecord as exc:
        return _undecodable(exc)
    stable_id = headers.stable_id(original, record.topic(), record.partition(), record.offset())
    return _dead(record, original, stable_id, reason, detail)


def _copy(record: KafkaMessage, original: Headers, stable_id: bytes, redelivery: int) -> Outgoing:
    updates = {
        headers.REDELIVERY_COUNT: headers.encode_count(redelivery),
        headers.MESSAGE_ID: stable_id,
    }
    return Outgoing(
        False, record.key(), record.value(), headers.replace(original, updates), 0, redelivery
    )


def _dead(
    record: KafkaMessage, original: Headers, stable_id: bytes, reason: str, detail: str
) -> Outgoing:
    updates = {
        headers.MESSAGE_ID: stable_id,
        headers.DLQ_REASON: reason.encode(),
        headers.DLQ_AT: headers.encode_ms(now_ms()),
    }
    if detail:
        updates[headers.DLQ_DETAIL] = detail.encode()
    return Outgoing(
        True,
        record.key(),
        record.value(),
        headers.replace(original, updates),
        record.timestamp()[1],
        0,
    )


def _undecodable(exc: UndecodableRecord) -> Outgoing:
    """Its own headers cannot be read, let alone copied: the dead letter
    keeps its key, value and timestamp, and takes its coordinates as kmq-id."""
    stable_id = headers.message_id(exc.topic, exc.partition, exc.offset).encode()
    dlq_headers = [
        (headers.MESSAGE_ID, stable_id),
        (headers.DLQ_REASON, UNDECODABLE.encode()),
        (headers.DLQ_DETAIL, str(exc).encode()),
        (headers.DLQ_AT, headers.encode_ms(now_ms())),
    ]
    return Outgoing(True, exc.key, exc.value, dlq_headers, exc.timestamp, 0, undecodable=True)


def schedule_copy(
    producer: Producer, config: QueueConfig, out: Outgoing, **delivery: DeliveryCallback
) -> None:
    """A copy that waits its backoff: a schedule on the queue's schedules
    topic, which the queue's scheduler delivers back to the queue when due.
    Only for a copy with a value (a null one would be a tombstone).
    ``delivery``: an ``on_delivery`` callback, for a caller that must know."""
    assert config.backoff is not None and out.value is not None
    message_id = headers.find(out.headers, headers.MESSAGE_ID) or b""
    producer.produce(
        config.schedules_topic,
        key=headers.retry_schedule_id(message_id, out.redelivery),
        value=out.value,
        headers=wire.schedule_headers(
            now_ms() + config.backoff.delay_ms(out.redelivery), config.topic, out.key, out.headers
        ),
        **delivery,
    )


def send_again(
    producer: CheckedProducer,
    topic: str,
    records: Iterable[KafkaMessage],
    edit: Draft | None = None,
) -> None:
    """Records back onto the queue as fresh messages (redrive, replay): key,
    value and kmq-id kept (a first copy's is its coordinates), delivery count
    and DLQ reason dropped. One wait for the broker, however many records.
    A record whose headers do not decode is sent with key, value and kmq-id
    only: its headers are what cannot be read. ``edit``: key, value and the
    user's headers to send instead (a redrive with edits); the rest as above."""
    partitions = frozenset(producer.partitions(topic))
    for record in records:
        try:
            original = read_headers(record)
        except UndecodableRecord:
            original = None
        stable = headers.stable_id(original, record.topic(), record.partition(), record.offset())
        kept = headers.replace(headers.fresh(original), {headers.MESSAGE_ID: stable})
        key, value = record.key(), record.value()
        if edit is not None:
            key, value, kept = edit.key, edit.value, edit.onto(kept)
        partition = _first_partition(topic, stable, partitions)
        producer.produce(topic, key=key, value=value, headers=kept, partition=partition)
    producer.flush(30)


def _first_partition(topic: str, stable_id: bytes, partitions: frozenset[int]) -> int:
    """The partition of ``topic`` that a kmq-id names, so that a message's
    copies and markers stay in one partition; -1 (the partitioner's choice)
    for an id of another topic or none, or naming a partition the topic does
    not have (a hostile header, which would fail the whole redrive)."""
    parsed = headers.parse_message_id(stable_id.decode(errors="replace"))
    if parsed is None or parsed[0] != topic or parsed[1] not in partitions:
        return -1
    return parsed[1]
