"""Message: one delivery of a queue record, as the worker sees it."""

from enum import IntEnum

from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
)
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import headers
from kmqadmin.kmq.headers import Headers
from kmqadmin.kmq.markers import KEY


class TimestampType(IntEnum):
    NOT_AVAILABLE = TIMESTAMP_NOT_AVAILABLE
    CREATE_TIME = TIMESTAMP_CREATE_TIME
    LOG_APPEND_TIME = TIMESTAMP_LOG_APPEND_TIME


class Message:
    """A delivered record. ``delivery_count`` is 1 on the first delivery.

    ``id`` (the kmq-id header) is the same on every copy of the message, so
    it is what to de-duplicate on and what the console and API address.
    A thin view over the consumed record: polling thousands a second, the
    fields are read from it when asked rather than copied up front. Its
    headers decode: QueueClient hands out no record whose headers do not.
    """

    __slots__ = ("_record", "delivery_count", "offset", "partition")

    def __init__(
        self, record: KafkaMessage, delivery_count: int, partition: int, offset: int
    ) -> None:
        self._record = record
        self.delivery_count = delivery_count
        # Read on every ack: plain attributes, which the poll has at hand.
        self.partition = partition
        self.offset = offset

    topic = property(lambda self: self._record.topic(), doc="queue topic")
    record = property(lambda self: self._record, doc="the consumed record, to send on as it is")
    key = property(lambda self: self._record.key())
    value = property(lambda self: self._record.value())

    @property
    def marker_key(self) -> bytes:
        """Where its markers go: (partition, offset), kmq-encoded; made when
        asked, since a compact-format batch is acked without it."""
        return KEY.pack(self.partition, self.offset)

    @property
    def headers(self) -> Headers:
        return read_headers(self._record) or []

    @property
    def timestamp(self) -> int:
        return self._record.timestamp()[1]

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType(self._record.timestamp()[0])

    @property
    def id(self) -> str:
        found = headers.stable_id(self.headers, self.topic, self.partition, self.offset)
        return found.decode()

    def __repr__(self) -> str:
        return f"<Message {self.id} delivery {self.delivery_count}>"
