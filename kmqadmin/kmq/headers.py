"""Queue record headers that kmqadmin reads and writes (docs/wire.md)."""

import re
import struct

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.bounds import MAX_OFFSET, MAX_PARTITION
from kmqadmin.kafka.client.record import UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import names

# Every header kmqadmin writes on a queue's records starts with this; a
# producer's own headers must not (the API refuses them).
PREFIX = "kmq-"
REDELIVERY_COUNT = "kmq-redelivery-count"
MESSAGE_ID = "kmq-id"
DLQ_REASON = "kmq-dlq-reason"
DLQ_DETAIL = "kmq-dlq-detail"
# When the letter was written, epoch ms in ASCII decimal: a letter keeps its
# message's timestamp, so the record's own time says when it was produced.
DLQ_AT = "kmq-dlq-at"

Headers = list[tuple[str, bytes | None]]

_INT32 = struct.Struct(">i")


class HeaderError(ValueError):
    """A kmq header whose bytes do not decode."""


def encode_count(count: int) -> bytes:
    """kmq's encoding: one byte while it fits, else int32 big-endian."""
    return bytes((count,)) if 0 <= count < 128 else _INT32.pack(count)


def decode_count(data: bytes | None) -> int:
    if data is None:
        return 0
    if len(data) == 1:
        return data[0]
    if len(data) == 4:
        if (count := _INT32.unpack(data)[0]) < 0:  # would earn 2**31 more deliveries
            raise HeaderError(f"{REDELIVERY_COUNT} is negative: {count}")
        return count
    raise HeaderError(f"{REDELIVERY_COUNT} must be 1 or 4 bytes, got {len(data)}")


# A kmq-id joins a first copy's coordinates with it; topic names hold none.
MESSAGE_ID_SEPARATOR = "/"


def message_id(topic: str, partition: int, offset: int) -> str:
    """The kmq-id of the copy at these coordinates when it is the first one:
    ``<topic>/<partition>/<offset>``, the same on every later copy."""
    return MESSAGE_ID_SEPARATOR.join((topic, str(partition), str(offset)))


def stable_id(record_headers: Headers | None, topic: str, partition: int, offset: int) -> bytes:
    """The kmq-id of the record at these coordinates: its kmq-id header, or its
    own coordinates on a first copy, which carries none (QueueProducer's), and
    on a record whose header is not a kmq-id (any producer can write one)."""
    found = find(record_headers, MESSAGE_ID)
    if found is not None and is_message_id(found):
        return found
    return message_id(topic, partition, offset).encode()


def is_message_id(value: bytes) -> bool:
    """A kmq-id header that names a copy; one that does not is malformed."""
    return value.isascii() and parse_message_id(value.decode()) is not None


def retry_schedule_id(message_id: bytes, redelivery: int) -> bytes:
    """The schedule id of a delayed copy (a queue with a backoff): one per
    message and attempt, so a tracker that redoes a redelivery after a crash
    writes the same schedule again instead of a second one."""
    return b"kmq-retry/%s/%d" % (message_id, redelivery)


_SEP = re.escape(MESSAGE_ID_SEPARATOR)
_NUMBER = "0|[1-9][0-9]{0,18}"  # no sign, no leading zero: one spelling per id
_MESSAGE_ID = re.compile(rf"({names.TOPIC_NAME}){_SEP}({_NUMBER}){_SEP}({_NUMBER})", re.ASCII)


def parse_message_id(text: str) -> tuple[str, int, int] | None:
    """(topic, partition, offset) of a kmq-id, or None if it is not one: a
    legal topic name and numbers within Kafka's bounds, spelled as
    message_id() spells them, so an id names one copy and one only."""
    found = _MESSAGE_ID.fullmatch(text)
    if found is None or found[1] in (".", ".."):
        return None
    partition, offset = int(found[2]), int(found[3])
    if partition > MAX_PARTITION or offset > MAX_OFFSET:
        return None
    return found[1], partition, offset


def find(headers: Headers | None, name: str) -> bytes | None:
    """The last value of ``name`` (later headers win, as in Kafka clients)."""
    value = None
    for key, data in headers or ():
        if key == name:
            value = data
    return value


def find_in(record: KafkaMessage, name: str) -> bytes | None:
    """``find`` on a consumed record's headers; None for a record whose
    headers do not decode: a search over records (a kmq-id, a DLQ reason)
    cannot match what it cannot read, and must not stop on it."""
    try:
        return find(read_headers(record), name)
    except UndecodableRecord:
        return None


def replace(headers: Headers | None, updates: dict[str, bytes]) -> Headers:
    """``headers`` with ``updates`` set, every other header kept in order."""
    kept = [(k, v) for k, v in headers or () if k not in updates]
    return kept + list(updates.items())


# What a message sent again as new (redriven, replayed) does not keep: it starts over.
_STARTS_OVER = frozenset((REDELIVERY_COUNT, DLQ_REASON, DLQ_DETAIL, DLQ_AT))


def fresh(headers: Headers | None) -> Headers:
    """The headers of a copy that starts over: kmq-id and the user's own
    headers kept (the message's history stays one story), its delivery
    count and DLQ reason dropped."""
    return [(k, v) for k, v in headers or () if k not in _STARTS_OVER]


def encode_ms(ms: int) -> bytes:
    return str(ms).encode()


def decode_ms(data: bytes | None) -> int | None:
    """An epoch-ms header's value; None when absent or not a plain decimal
    (a letter written by another tracker, or by hand)."""
    if data is None or not data.isdigit() or len(data) > 19:
        return None
    return int(data)
