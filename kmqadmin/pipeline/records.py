"""Reading one offset range into Arrow record batches, on a Spark executor.

The columns are those of Spark's Kafka source (key, value, topic,
partition, offset, timestamp, timestampType, headers), so a job reads the
same frame from either source. Whole batches go to Spark as Arrow: no Row
object per record, and the fixed columns are built without a Python loop.
"""

import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, TopicPartition

from .ranges import OffsetRange

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

BATCH = 10_000
# A range whose last offsets are never delivered (aborted records, a
# transaction's control record on a broker that reports no EOF there) ends
# after this long without a record.
IDLE_S = 5.0
POLL_S = 0.05


def read_range(config: Mapping[str, Any], part: OffsetRange) -> Iterator[pa.RecordBatch]:
    """The records of ``part``, in offset order, as batches of up to BATCH rows."""
    consumer = Consumer({**config, "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
        last, quiet_since = part.end - 1, time.monotonic()
        while True:
            # consume() waits for a full batch or the timeout: keep it short.
            records = consumer.consume(BATCH, POLL_S)
            if not records:
                if time.monotonic() - quiet_since > IDLE_S:
                    return
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
                    # Brokers that report a short end (Tansu) send EOF early; only an
                    # EOF at or past our end means the rest of the range is not records.
                    done = record.offset() > last
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
        stamps.append(stamp * 1000)
        # librdkafka: 1 CreateTime, 2 LogAppendTime; Spark: 0 and 1.
        kinds.append(kind - 1)
        headers.append(record.headers())
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
