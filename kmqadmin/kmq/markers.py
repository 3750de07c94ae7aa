"""The marker wire format: SoftwareMill kmq's, byte for byte, and our compact ranges.

Key: int32 queue partition + int64 queue offset, big-endian (12 bytes); for
a range marker, the range's first offset.
Value: one type byte; START carries an int64 big-endian message timeout in
ms, counted from the marker record's own timestamp, as kmq writes it
(KmqClient: StartMarker(msgTimeoutMs); its tracker: timestamp + value);
EXTEND carries an int64 epoch-ms deadline; REJECT may carry a UTF-8 reason.
kmq reads any value that is not START as "end", so our extensions degrade to
an ack in kmq's own tracker.

kmqadmin once wrote START with an epoch-ms deadline instead; a START value
at or above ABSOLUTE_FROM is still read that way (start_deadline).

The compact format (a queue's ``marker_format="compact"``) adds two range
markers, so a poll batch costs one start record per partition and an
acknowledged batch one end record, instead of one of each per message,
and one for a delivery no one saw:

- START_RANGE, 17 bytes: 0x05, the int64 timeout (or deadline) as START's,
  then the int64 last offset of the range; every offset from the key's to
  it (both included) is a record the client handed out. The client splits
  a batch's starts at offset gaps and at MAX_SPAN offsets.
- END_RANGE, 9 bytes: 0x06, then the int64 last offset; it ends every open
  delivery from the key's offset to it, and may span gaps.

- RETURN, 1 byte: 0x07. The delivery is over without anyone having seen
  it (an SQS receiver's unclaimed stock, sqs/receiving/receivers.py): redelivered
  now, as REDELIVER_NOW, but with its delivery count kept, since SQS
  counts only the receives it returns.

Both formats use the per-message markers for per-message actions (release,
reject, extend, and an ack outside any run). A range whose last offset is
below its first, that spans more than MAX_SPAN offsets, or that starts
below 0 is no marker (MarkerError). kmq's own tracker reads 0x05, 0x06 and
0x07 as an end of the first offset: a compact queue is not for kmq's clients.
"""

import struct
from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import NamedTuple

KEY = struct.Struct(">iq")
DEADLINE = struct.Struct(">q")
# 10^11 ms: a timeout of over three years, or an epoch-ms time in March 1973.
# A START value below it is a timeout (kmq's form), at or above it a deadline.
ABSOLUTE_FROM = 10**11
# A deadline is held as an int64 (open_set's columns); a timeout plus a
# timestamp beyond that is garbage from a hostile producer.
DEADLINE_MIN, DEADLINE_MAX = -(2**63), 2**63 - 1
START_RANGE_VALUE = struct.Struct(">bqq")  # type, timeout or deadline, last offset
END_RANGE_VALUE = struct.Struct(">bq")  # type, last offset
# The most offsets one range marker covers: a poll batch is far smaller, and
# a reader (the console's view holds offsets one by one) must not be made to
# hold millions for one record.
MAX_SPAN = 1 << 14


class MarkerType(IntEnum):
    END = 0x00
    START = 0x01
    REDELIVER_NOW = 0x02
    EXTEND = 0x03
    REJECT = 0x04
    START_RANGE = 0x05
    END_RANGE = 0x06
    RETURN = 0x07


class MarkerError(ValueError):
    """Bytes that are not a marker; the message says which rule they break."""


def encode_key(partition: int, offset: int) -> bytes:
    return KEY.pack(partition, offset)


def decode_key(data: bytes | None) -> tuple[int, int]:
    if data is None or len(data) != KEY.size:
        size = "no key" if data is None else f"{len(data)} bytes"
        raise MarkerError(
            f"marker key must be 12 bytes (int32 partition, int64 offset), got {size}"
        )
    return KEY.unpack(data)


def start(timeout_ms: int) -> bytes:
    """Due ``timeout_ms`` after the marker's timestamp (kmq's form; a value of
    ABSOLUTE_FROM or more is an epoch-ms deadline instead)."""
    return b"\x01" + DEADLINE.pack(timeout_ms)


def start_deadline(value: int, marker_timestamp: int) -> int:
    """The epoch-ms deadline of a START marker whose int64 is ``value`` and whose
    record timestamp is ``marker_timestamp``; MarkerError when it is past int64."""
    if value >= ABSOLUTE_FROM:
        return value
    deadline = marker_timestamp + value
    if not DEADLINE_MIN <= deadline <= DEADLINE_MAX:
        raise MarkerError(f"START timeout {value} + timestamp {marker_timestamp} overflows int64")
    return deadline


def extend(deadline_ms: int) -> bytes:
    return b"\x03" + DEADLINE.pack(deadline_ms)


def reject(reason: str = "") -> bytes:
    return b"\x04" + reason.encode()


END = b"\x00"
REDELIVER_NOW = b"\x02"
RETURN = b"\x07"  # the compact format's only


def start_range(timeout_ms: int, last: int) -> bytes:
    """START for every offset from the key's to ``last``, due as START's."""
    return START_RANGE_VALUE.pack(MarkerType.START_RANGE, timeout_ms, last)


def end_range(last: int) -> bytes:
    """END for every offset from the key's to ``last``."""
    return END_RANGE_VALUE.pack(MarkerType.END_RANGE, last)


def spans(offsets: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted distinct ``offsets`` as (first, last) runs of consecutive ones,
    none longer than a range marker may be (MAX_SPAN)."""
    first, last = offsets[0], offsets[-1]
    if last - first == len(offsets) - 1 and last - first < MAX_SPAN:
        return [(first, last)]  # one run: a whole poll batch of a partition, as a rule
    found: list[tuple[int, int]] = []
    first = last = offsets[0]
    for offset in offsets[1:]:
        if offset != last + 1 or offset - first >= MAX_SPAN:
            found.append((first, last))
            first = offset
        last = offset
    found.append((first, last))
    return found


def ends(offsets: Iterable[int], compact: bool) -> list[tuple[int, bytes]]:
    """The end records acking ``offsets`` of one partition, as (key offset,
    value): kmq's END each, or (``compact``) an END_RANGE per run of
    consecutive offsets, END for a run of one. Every writer of acks (a
    worker, the tracker, the console) writes them so."""
    if not compact:
        return [(offset, END) for offset in offsets]
    distinct = sorted(set(offsets))
    runs = spans(distinct) if distinct else []
    return [(first, end_range(last) if last > first else END) for first, last in runs]


class Marker(NamedTuple):
    """A decoded marker. A range marker is its per-message kind (START or
    END) over ``first``..``last``; a per-message marker has first == last."""

    kind: MarkerType
    partition: int
    first: int
    last: int
    deadline: int  # epoch ms: START's resolved, EXTEND's; else 0
    reason: bytes  # REJECT's; else b""


def decode(key: bytes | None, value: bytes | None, timestamp: int) -> Marker:
    """The marker a record holds, ``timestamp`` being the record's; MarkerError
    saying which rule the bytes break when they are not one."""
    partition, first = decode_key(key)
    if not value:
        raise MarkerError("marker value is empty; it must start with a type byte 0x00-0x07")
    try:
        kind = MarkerType(value[0])
    except ValueError:
        raise MarkerError(f"unknown marker type 0x{value[0]:02x}") from None
    last, deadline, reason = first, 0, b""
    if kind in (MarkerType.START, MarkerType.EXTEND):
        _expect_size(kind, value, 1 + DEADLINE.size)
        deadline = DEADLINE.unpack_from(value, 1)[0]
    elif kind is MarkerType.START_RANGE:
        _expect_size(kind, value, START_RANGE_VALUE.size)
        _, deadline, last = START_RANGE_VALUE.unpack(value)
        kind = MarkerType.START
    elif kind is MarkerType.END_RANGE:
        _expect_size(kind, value, END_RANGE_VALUE.size)
        _, last = END_RANGE_VALUE.unpack(value)
        _check_range(kind, first, last)
        kind = MarkerType.END
    elif kind is MarkerType.REJECT:
        reason = value[1:]
    else:
        _expect_size(kind, value, 1)
    if kind is MarkerType.START:
        # No record sits below 0: once due, its read-back could never succeed.
        _check_range(value[0], first, last)
        deadline = start_deadline(deadline, timestamp)
    return Marker(kind, partition, first, last, deadline, reason)


def _expect_size(kind: MarkerType, value: bytes, size: int) -> None:
    if len(value) != size:
        what = "byte" if size == 1 else "bytes"
        raise MarkerError(f"{kind.name} marker must be {size} {what}, got {len(value)}")


def _check_range(kind: int, first: int, last: int) -> None:
    if first < 0:
        raise MarkerError(f"{MarkerType(kind).name} for queue offset {first}, below any record")
    if last < first:
        raise MarkerError(f"range {first}..{last} is empty or reversed")
    if last - first >= MAX_SPAN:
        raise MarkerError(f"range {first}..{last} spans more than {MAX_SPAN} offsets")
