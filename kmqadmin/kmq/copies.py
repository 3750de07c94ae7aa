"""What a due message becomes: a redelivered copy, or a dead letter."""

from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.checked_producer import CheckedProducer
from kmqadmin.kafka.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.record import headers as read_headers

from . import headers
from .headers import Headers

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


def next_copy(record: KafkaMessage, max_redeliveries: int, rejected: str | None) -> Outgoing:
    """The copy with kmq-redelivery-count + 1, or the DLQ record once it is used up.

    ``rejected`` is the reject reason when a worker rejected the message (""
    when it gave none), None otherwise.
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
    if count >= max_redeliveries:
        return _dead(record, original, stable_id, MAX_REDELIVERIES, "")
    updates = {
        headers.REDELIVERY_COUNT: headers.encode_count(count + 1),
        headers.MESSAGE_ID: stable_id,
    }
    return Outgoing(
        False, record.key(), record.value(), headers.replace(original, updates), 0, count + 1
    )


def _dead(
    record: KafkaMessage, original: Headers, stable_id: bytes, reason: str, detail: str
) -> Outgoing:
    updates = {headers.MESSAGE_ID: stable_id, headers.DLQ_REASON: reason.encode()}
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
    ]
    return Outgoing(True, exc.key, exc.value, dlq_headers, exc.timestamp, 0, undecodable=True)


def send_again(producer: CheckedProducer, topic: str, records: Iterable[KafkaMessage]) -> None:
    """Records back onto the queue as fresh messages (redrive, replay): key,
    value and kmq-id kept (a first copy's is its coordinates), delivery count
    and DLQ reason dropped. One wait for the broker, however many records.
    A record whose headers do not decode is sent with key, value and kmq-id
    only: its headers are what cannot be read."""
    for record in records:
        try:
            original = read_headers(record)
        except UndecodableRecord:
            original = None
        stable = headers.stable_id(original, record.topic(), record.partition(), record.offset())
        kept = headers.replace(headers.fresh(original), {headers.MESSAGE_ID: stable})
        partition = _first_partition(topic, stable)
        producer.produce(
            topic, key=record.key(), value=record.value(), headers=kept, partition=partition
        )
    producer.flush(30)


def _first_partition(topic: str, stable_id: bytes) -> int:
    """The partition of ``topic`` that a kmq-id names, so that a message's
    copies and markers stay in one partition; -1 (the partitioner's choice)
    for an id of another topic or none."""
    parsed = headers.parse_message_id(stable_id.decode(errors="replace"))
    return parsed[1] if parsed is not None and parsed[0] == topic else -1
