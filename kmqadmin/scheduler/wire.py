"""Schedule records on the wire, as etf1/kafka-message-scheduler writes them.

A schedule is a record on the schedules topic: key = schedule id, value =
payload, headers ``scheduler-epoch`` (decimal epoch seconds),
``scheduler-target-topic`` and ``scheduler-target-key``; every other header
passes through to the fired record. A tombstone (null value) cancels.
"""

import math
from dataclasses import dataclass

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.clock import LAST_MS, to_ms
from kmqadmin.kafka.client.record import UNDECODABLE, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kafka.client.topic_names import BadTopicName, check_name

# The prefix of every header etf1's wire format gives a meaning to.
PREFIX = "scheduler-"
EPOCH = "scheduler-epoch"
TARGET_TOPIC = "scheduler-target-topic"
TARGET_KEY = "scheduler-target-key"
FIRED_TIMESTAMP = "scheduler-timestamp"
FIRED_KEY = "scheduler-key"
FIRED_TOPIC = "scheduler-topic"

_INPUT = frozenset((EPOCH, TARGET_TOPIC, TARGET_KEY))
# A record fired before (a queue copy delayed twice) gets fresh ones of these.
_FIRED = frozenset((FIRED_TIMESTAMP, FIRED_KEY, FIRED_TOPIC))

Headers = list[tuple[str, bytes | None]]

MAX_EPOCH_S = LAST_MS // 1000
# The first second of year 1: an earlier epoch is no time either, and one far
# enough back (-1e306) overflows to -inf in milliseconds.
MIN_EPOCH_S = -62_135_596_800


class ScheduleError(ValueError):
    """A schedule record that cannot be fired: said why, with no coordinates
    (the caller knows where the record is)."""


@dataclass(frozen=True, slots=True)
class Target:
    """The record a schedule becomes when it fires."""

    topic: str
    key: bytes | None
    value: bytes
    headers: Headers


def encode_epoch(epoch_ms: int) -> bytes:
    """Whole seconds as etf1 writes them; milliseconds only when there are some
    (a sub-second schedule is ours alone: etf1 parses whole seconds)."""
    seconds, ms = divmod(epoch_ms, 1000)
    return (f"{seconds}.{ms:03d}" if ms else str(seconds)).encode()


def decode_epoch(data: bytes | None) -> int:
    """``scheduler-epoch`` in epoch milliseconds (a time before 1970 is due
    now); outside MIN_EPOCH_S..MAX_EPOCH_S the record is malformed."""
    if data is None:
        raise ScheduleError(f"no {EPOCH} header")
    try:
        text = data.decode("ascii")
        seconds = int(text) if text.isdigit() else float(text)
    except (UnicodeDecodeError, ValueError):
        raise ScheduleError(f"{EPOCH} is not decimal epoch seconds: {data[:40]!r}") from None
    if not math.isfinite(seconds):
        raise ScheduleError(f"{EPOCH} is not a finite number: {data[:40]!r}")
    if seconds > MAX_EPOCH_S:
        raise ScheduleError(f"{EPOCH} is after the year 9999: {data[:40]!r}")
    if seconds < MIN_EPOCH_S:
        raise ScheduleError(f"{EPOCH} is before the year 1: {data[:40]!r}")
    return max(0, to_ms(seconds))


def check_due(epoch_ms: int) -> int:
    """``epoch_ms`` if a schedule may be due then (what decode_epoch reads back)."""
    if epoch_ms > to_ms(MAX_EPOCH_S):
        raise ScheduleError("due after 9999-12-31T23:59:59Z")
    return epoch_ms


def headers_of(record: KafkaMessage) -> Headers:
    """A schedule record's headers; ScheduleError when they do not decode, so
    such a record is skipped (counted, logged) like any other unfireable one."""
    try:
        return read_headers(record) or []
    except UndecodableRecord:
        raise ScheduleError(f"{UNDECODABLE}: a header name is not UTF-8") from None


def deadline(headers: Headers | None) -> int:
    """The fire time of a schedule record, checking what firing will need."""
    epoch = topic = None
    for name, data in headers or ():
        if name == EPOCH:
            epoch = data
        elif name == TARGET_TOPIC:
            topic = data
    _topic_name(topic)
    return decode_epoch(epoch)


def schedule_headers(
    epoch_ms: int, target_topic: str, target_key: bytes | None, passed: Headers
) -> Headers:
    """The headers of a schedule record: ours, then the ones that pass through."""
    if not target_topic:
        raise ValueError("target_topic is required")
    ours: Headers = [(EPOCH, encode_epoch(epoch_ms)), (TARGET_TOPIC, target_topic.encode())]
    if target_key is not None:
        ours.append((TARGET_KEY, target_key))
    return ours + [(k, v) for k, v in passed if k not in _INPUT]


def passed(headers: Headers | None) -> Headers:
    """The headers of a schedule record that pass through to the fired one."""
    return [(k, v) for k, v in headers or () if k not in _INPUT]


def target(record: KafkaMessage, schedules_topic: str) -> Target:
    """The record to produce when ``record`` fires (etf1's triggered message)."""
    headers = headers_of(record)
    value = record.value()
    if value is None:
        raise ScheduleError("a tombstone does not fire")
    found: dict[str, bytes | None] = {}
    passed: Headers = []
    for name, data in headers:
        if name in _INPUT:
            found[name] = data
        elif name not in _FIRED:
            passed.append((name, data))
    topic_name = _topic_name(found.get(TARGET_TOPIC))
    created = record.timestamp()[1] // 1000
    passed += [
        (FIRED_TIMESTAMP, str(created).encode()),
        (FIRED_KEY, record.key()),
        (FIRED_TOPIC, schedules_topic.encode()),
    ]
    return Target(topic_name, found.get(TARGET_KEY), value, passed)


def _topic_name(data: bytes | None) -> str:
    """The target topic, if Kafka allows the name: asking the broker about one
    it refuses (a NUL, a space) raises instead of saying it is missing."""
    if not data:
        raise ScheduleError(f"no {TARGET_TOPIC} header")
    try:
        return check_name(data.decode())
    except UnicodeDecodeError:
        raise ScheduleError(f"{TARGET_TOPIC} is not UTF-8: {data[:40]!r}") from None
    except BadTopicName as exc:
        raise ScheduleError(
            f"{TARGET_TOPIC} is not a topic name Kafka allows ({exc}): {data[:40]!r}"
        ) from None
