"""Decoding the record batches a ShareFetch response carries (format v2, the
only one a Kafka 4 broker stores) into confluent-kafka Messages, so the queue
code downstream reads them exactly as it reads librdkafka's.

A fetch returns whole batches, but the member acquired only some of their
offsets (record-limit acquisition stops mid-batch): only records inside the
acquired ranges are kept, each with its range's delivery count. Control
batches and records outside the ranges are skipped. A record whose header
name is not UTF-8 comes back marked undecodable (``record.mark_undecodable``),
as librdkafka's would; a batch that cannot be decoded raises BatchError, and
its acquired offsets are the caller's to move aside.
"""

import struct
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME
from confluent_kafka import Message as KafkaMessage
from kafka import codec

from kmqadmin.kafka.client.record import mark_undecodable

# baseOffset, batchLength, leaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, count
_HEADER = struct.Struct(">qiibIhiqqqhii")
_LOG_OVERHEAD = 12  # baseOffset + batchLength, not counted in batchLength
_COMPRESSION, _LOG_APPEND_TIME, _CONTROL = 0x07, 0x08, 0x20

_DECOMPRESS: dict[int, Callable[[bytes], bytes]] = {
    1: codec.gzip_decode,
    2: codec.snappy_decode,
    3: codec.lz4_decode,
    4: codec.zstd_decode,
}


class BatchError(ValueError):
    """A batch that is not a well-formed v2 batch of a codec we know."""


@dataclass(frozen=True, slots=True)
class Acquired:
    """One AcquiredRecords range of a ShareFetch response."""

    first: int
    last: int
    delivery_count: int


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A batch decompressed, and where each of its records starts."""

    body: bytes
    offsets: list[int]  # each record's offset, in order
    starts: list[int]  # where each record starts in body
    base_ts: int
    log_append: int | None  # the batch's time, for LogAppendTime batches


class BatchCache:
    """The last batches seen, decompressed and indexed by offset. A
    record-limit fetch returns the whole batch again for every slice of it a
    member acquires: decompressing and walking it once, not once a fetch,
    keeps polling a large producer batch a few records at a time cheap."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[int, int, int], _Indexed] = OrderedDict()

    def get(self, key: tuple[int, int, int]) -> _Indexed | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: tuple[int, int, int], indexed: _Indexed) -> None:
        self._entries[key] = indexed
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)


def records(
    data: bytes | None,
    topic: str,
    partition: int,
    acquired: Sequence[Acquired],
    cache: BatchCache,
    covered: list[tuple[int, int]],
) -> Iterator[KafkaMessage]:
    """The acquired records of ``data``, in offset order. BatchError, after
    what was decoded before it, when a batch is malformed. ``covered`` gets
    the (first, last) offsets of every whole batch read, control batches
    too: an acquired offset inside one that yielded no record has none (a
    gap); one outside them was not in the data at all."""
    if not data or not acquired:
        return
    view, pos, end = memoryview(data), 0, len(data)
    ranges = sorted(acquired, key=lambda r: r.first)
    while pos + _LOG_OVERHEAD <= end:
        base, length = struct.unpack_from(">qi", view, pos)
        stop = pos + _LOG_OVERHEAD + length
        if stop > end:
            return  # a partial batch at the end of a fetch: the broker may cut one
        where = f"{topic}/{partition}: batch at offset {base}"
        if length < _HEADER.size - _LOG_OVERHEAD:
            raise BatchError(f"{where} is {length} bytes")
        header = _HEADER.unpack_from(view, pos)
        magic, crc, attributes, last_delta = header[3], header[4], header[5], header[6]
        if magic != 2:
            raise BatchError(f"{where} has magic {magic}")
        if attributes & _CONTROL:
            covered.append((base, base + last_delta))
        elif _overlaps(ranges, base, base + last_delta):
            key = (partition, base, crc)
            indexed = cache.get(key)
            if indexed is None:
                indexed = _index(view[pos:stop], header, where)
                cache.put(key, indexed)
            yield from _decode(indexed, topic, partition, ranges, where)
            covered.append((base, base + last_delta))
        pos = stop


def _overlaps(ranges: Sequence[Acquired], first: int, last: int) -> bool:
    return any(r.first <= last and first <= r.last for r in ranges)


def _index(batch: memoryview, header: tuple, where: str) -> _Indexed:
    base, attributes, base_ts, max_ts, count = (
        header[0],
        header[5],
        header[7],
        header[8],
        header[12],
    )
    body = _body(batch[_HEADER.size :], attributes, where)
    offsets: list[int] = []
    starts: list[int] = []
    pos, size = 0, len(body)
    try:
        for _ in range(count):
            length, at = _varint(body, pos)
            if length < 0 or at + length > size:
                raise ValueError("a record runs past the batch")
            _, after_ts = _varint(body, at + 1)  # a byte of attributes, the time delta
            delta, _ = _varint(body, after_ts)
            starts.append(pos)
            offsets.append(base + delta)
            pos = at + length
    except (IndexError, ValueError) as exc:
        raise BatchError(f"{where} is malformed: {exc}") from None
    log_append = max_ts if attributes & _LOG_APPEND_TIME else None
    return _Indexed(body, offsets, starts, base_ts, log_append)


def _body(raw: memoryview, attributes: int, where: str) -> bytes:
    kind = attributes & _COMPRESSION
    if not kind:
        return raw.tobytes()
    decompress = _DECOMPRESS.get(kind)
    if decompress is None:
        raise BatchError(f"{where} uses unknown compression {kind}")
    try:
        return decompress(raw.tobytes())
    except Exception as exc:  # each codec raises its own kinds
        raise BatchError(f"{where} does not decompress: {exc}") from None


def _decode(
    indexed: _Indexed,
    topic: str,
    partition: int,
    ranges: Sequence[Acquired],
    where: str,
) -> Iterator[KafkaMessage]:
    """The hot loop: only the acquired records are read, one Message each."""
    body, offsets, starts, base_ts = indexed.body, indexed.offsets, indexed.starts, indexed.base_ts
    log_append = indexed.log_append
    kind = TIMESTAMP_CREATE_TIME if log_append is None else TIMESTAMP_LOG_APPEND_TIME
    try:
        for span in ranges:
            i = bisect_left(offsets, span.first)
            while i < len(offsets) and offsets[i] <= span.last:
                _, pos = _varint(body, starts[i])
                ts_delta, pos = _varint(body, pos + 1)
                _, pos = _varint(body, pos)  # the offset delta, indexed already
                key, pos = _bytes(body, pos)
                value, pos = _bytes(body, pos)
                headers, names_ok, pos = _headers(body, pos)
                timestamp = base_ts + ts_delta if log_append is None else log_append
                record = KafkaMessage(
                    topic=topic,
                    partition=partition,
                    offset=offsets[i],
                    key=key,
                    value=value,
                    headers=headers,
                    timestamp=(kind, timestamp),
                    delivery_count=span.delivery_count,
                )
                if not names_ok:
                    mark_undecodable(record)
                yield record
                i += 1
    except (IndexError, ValueError) as exc:
        raise BatchError(f"{where} is malformed: {exc}") from None


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint: (value, next position)."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    result, shift = b & 0x7F, 7
    while True:
        pos += 1
        b = buf[pos]
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos + 1
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    n, pos = _varint(buf, pos)
    if n < 0:
        return None, pos
    if pos + n > len(buf):
        raise ValueError("field runs past the batch")
    return buf[pos : pos + n], pos + n


def _headers(buf: bytes, pos: int) -> tuple[list[tuple[str, bytes | None]] | None, bool, int]:
    n, pos = _varint(buf, pos)
    if n <= 0:
        return None, True, pos
    found, ok = [], True
    for _ in range(n):
        name, pos = _bytes(buf, pos)
        value, pos = _bytes(buf, pos)
        try:
            found.append(((name or b"").decode(), value))
        except UnicodeDecodeError:
            ok = False
    return found, ok, pos
