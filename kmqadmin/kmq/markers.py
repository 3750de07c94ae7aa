"""The marker wire format, byte-compatible with SoftwareMill kmq.

Key: int32 queue partition + int64 queue offset, big-endian (12 bytes).
Value: one type byte; START carries an int64 big-endian message timeout in
ms, counted from the marker record's own timestamp, as kmq writes it
(KmqClient: StartMarker(msgTimeoutMs); its tracker: timestamp + value);
EXTEND carries an int64 epoch-ms deadline; REJECT may carry a UTF-8 reason.
kmq reads any value that is not START as "end", so our extensions degrade to
an ack in kmq's own tracker.

kmqadmin once wrote START with an epoch-ms deadline instead; a START value
at or above ABSOLUTE_FROM is still read that way (start_deadline).
"""

import struct
from enum import IntEnum

KEY = struct.Struct(">iq")
DEADLINE = struct.Struct(">q")
# 10^11 ms: a timeout of over three years, or an epoch-ms time in March 1973.
# A START value below it is a timeout (kmq's form), at or above it a deadline.
ABSOLUTE_FROM = 10**11
# A deadline is held as an int64 (open_set's columns); a timeout plus a
# timestamp beyond that is garbage from a hostile producer.
DEADLINE_MIN, DEADLINE_MAX = -(2**63), 2**63 - 1


class MarkerType(IntEnum):
    END = 0x00
    START = 0x01
    REDELIVER_NOW = 0x02
    EXTEND = 0x03
    REJECT = 0x04


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


def decode_value(data: bytes | None) -> tuple[MarkerType, int, bytes]:
    """(type, its int64 or 0, trailing payload such as a reject reason).

    The int64 is EXTEND's epoch-ms deadline, and START's timeout: resolve that
    with start_deadline and the record's timestamp."""
    if not data:
        raise MarkerError("marker value is empty; it must start with a type byte 0x00-0x04")
    try:
        kind = MarkerType(data[0])
    except ValueError:
        raise MarkerError(f"unknown marker type 0x{data[0]:02x}") from None
    if kind in (MarkerType.START, MarkerType.EXTEND):
        if len(data) != 1 + DEADLINE.size:
            raise MarkerError(f"{kind.name} marker must be 9 bytes (type + int64), got {len(data)}")
        return kind, DEADLINE.unpack_from(data, 1)[0], b""
    if kind is MarkerType.REJECT:
        return kind, 0, data[1:]
    if len(data) != 1:
        raise MarkerError(f"{kind.name} marker must be 1 byte, got {len(data)}")
    return kind, 0, b""
