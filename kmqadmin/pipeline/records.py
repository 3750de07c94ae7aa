"""Reading one offset range into Arrow record batches, on a Spark executor.

The columns are those of Spark's Kafka source (key, value, topic,
partition, offset, timestamp, timestampType, headers), so a job reads the
same frame from either source. Whole batches go to Spark as Arrow: no Row
object per record, and the fixed columns are built without a Python loop.
"""

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, TopicPartition

from kmqadmin.kafka.admin.stretch import OffsetRange
from kmqadmin.kafka.client.record import UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers

log = logging.getLogger(__name__)

HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])
SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("timestampType", pa.int32()),
        ("headers", pa.list_(HEADER)),
    ]
)
SPARK_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int, headers array<struct<key: string, value: binary>>"
)

# The widest time a microsecond timestamp column holds. A producer may write
# any int64 CreateTime (Kafka 4's default broker takes -10^16, a topic with
# message.timestamp.after.max.ms raised takes 10^16): beyond this the record
# is read with a null timestamp, and events() counts it as invalid. (Spark's
# own Kafka source fails the read instead: KAFKA_MALFORMED_RECORD_TIMESTAMP.)
_STAMP_MS = (2**63 - 1) // 1000

BATCH = 10_000
POLL_S = 0.05
# A range ends at its last offset or at the partition's end (EOF); a
# partition that gives neither for this long fails the read rather than
# handing Spark a range short of its records.
STALLED_S = 60.0


class RangeStalled(RuntimeError):
    """Neither the range's records nor the partition's end arrived in time."""


def read_range(config: Mapping[str, Any], part: OffsetRange) -> Iterator[pa.RecordBatch]:
    """The records of ``part``, in offset order, as batches of up to BATCH rows.

    The range's end came from the broker's end offset for our isolation
    level (ranges.RangeResolver.latest), so the records before it are there
    to read. Some offsets give no record (a transaction's commit or abort
    marker, aborted records under read_committed, records removed by
    compaction): the read ends at the first record at or past the range's
    last offset, or at end of partition, which Apache Kafka reports with
    the offset after everything it holds.
    """
    consumer = Consumer({**config, "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
        last, quiet_since = part.end - 1, time.monotonic()
        while True:
            # consume() waits for a full batch or the timeout: keep it short.
            records = consumer.consume(BATCH, POLL_S)
            if not records:
                if time.monotonic() - quiet_since > STALLED_S:
                    raise RangeStalled(
                        f"{part.topic}[{part.partition}]: neither offset {last} nor the end of "
                        f"the partition came in {STALLED_S:g} s"
                    )
                continue
            quiet_since = time.monotonic()
            kept, done = [], False
            for record in records:
                error = record.error()
                if error is None:
                    if record.offset() <= last:
                        kept.append(record)
                    done = record.offset() >= last
                elif error.code() == KafkaError._PARTITION_EOF:
                    done = True
                if done:
                    break
            if kept:
                yield _batch(kept, part.topic, part.partition)
            if done:
                return
    finally:
        consumer.close()


def _batch(records: list, topic: str, partition: int) -> pa.RecordBatch:
    n = len(records)
    keys, values, offsets, stamps, kinds, headers = [], [], [], [], [], []
    for record in records:
        keys.append(record.key())
        values.append(record.value())
        offsets.append(record.offset())
        kind, stamp = record.timestamp()
        stamps.append(stamp * 1000 if -_STAMP_MS <= stamp <= _STAMP_MS else _overflowed(record))
        # librdkafka: 1 CreateTime, 2 LogAppendTime; Spark: 0 and 1.
        kinds.append(kind - 1)
        headers.append(_headers(record))
    return pa.RecordBatch.from_arrays(
        [
            pa.array(keys, pa.binary()),
            pa.array(values, pa.binary()),
            pa.repeat(pa.scalar(topic, pa.string()), n),
            pa.repeat(pa.scalar(partition, pa.int32()), n),
            pa.array(offsets, pa.int64()),
            pa.array(stamps, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            pa.array(kinds, pa.int32()),
            pa.array(headers, pa.list_(HEADER)),
        ],
        schema=SCHEMA,
    )


def _overflowed(record: Any) -> None:
    log.warning(
        "%s/%d/%d: timestamp %d ms overflows a timestamp column; read with a null timestamp",
        record.topic(),
        record.partition(),
        record.offset(),
        record.timestamp()[1],
    )


def _headers(record: Any) -> list | None:
    """Its headers; null for a record whose headers do not decode (logged),
    so the analytics still count it, by its key, value and time."""
    try:
        return read_headers(record)
    except UndecodableRecord as exc:
        log.warning("%s; read with null headers", exc)
        return None
