"""Message: one delivery of a queue record, as the worker sees it."""

from dataclasses import dataclass
from enum import IntEnum

from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
)

from .headers import Headers


class TimestampType(IntEnum):
    NOT_AVAILABLE = TIMESTAMP_NOT_AVAILABLE
    CREATE_TIME = TIMESTAMP_CREATE_TIME
    LOG_APPEND_TIME = TIMESTAMP_LOG_APPEND_TIME


@dataclass(frozen=True, slots=True)
class Message:
    """A delivered record. ``delivery_count`` is 1 on the first delivery.

    ``id`` (the kmq-id header) is the same on every copy of the message, so
    it is what to de-duplicate on and what the console and API address.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int
    timestamp_type: TimestampType
    delivery_count: int
    id: str
