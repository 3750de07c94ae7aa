"""Events: the few columns of each queue, markers, DLQ and counts record
that the lifecycle needs, decoded from the wire formats of docs/wire.md
(markers, headers, share counts).

Payloads are dropped here, so everything after (the streaming run's event
log included) handles a few dozen bytes per record. A record that does not
decode (a marker with a short key, an unknown type byte or a reversed
range, a counts record
that is not share_counts' JSON), and any record whose time a run cannot
place (see placed()), is kept with ``valid = false``: the lifecycle skips it
and the run counts it. A compact range marker (kmq.markers) becomes one
event per offset it covers, with kmq's START or END as its type.
"""

import operator
import struct
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kmqadmin.kafka.client.clock import LAST_MS
from kmqadmin.kmq import headers, markers
from kmqadmin.kmq.markers import MarkerType
from kmqadmin.kmq.share.counts import ShareCounts

QUEUE, MARKERS, DLQ, COUNTS = "queue", "markers", "dlq", "counts"

# The times a run places events at: from the epoch to the last millisecond a
# datetime (the console's minutes) holds. Any producer can write a record
# time or counts minute outside them.
EARLIEST_MS = 0


@dataclass(frozen=True, slots=True)
class QueueTopics:
    """A queue and its companion topics, by name.

    A kmq queue has a markers topic. A share queue has none (the broker
    tracks its deliveries): it has a counts topic instead, where its clients
    publish what they acknowledged each minute (kmq.share.counts).
    """

    queue: str
    markers: str | None
    dlq: str
    counts: str | None = None

    def __post_init__(self) -> None:
        if (self.markers is None) == (self.counts is None):
            raise ValueError(f"{self.queue}: a markers topic (kmq) or a counts topic (share)")

    @classmethod
    def share(cls, queue: str, dlq: str, counts: str) -> "QueueTopics":
        return cls(queue, None, dlq, counts)

    @property
    def is_share(self) -> bool:
        return self.counts is not None

    def roles(self) -> list[tuple[str, str, str]]:
        tracking = (self.markers, MARKERS) if self.counts is None else (self.counts, COUNTS)
        return [
            (self.queue, self.queue, QUEUE),
            (tracking[0], self.queue, tracking[1]),
            (self.dlq, self.queue, DLQ),
        ]


def topics(queues: Sequence[QueueTopics]) -> list[str]:
    return [topic for q in queues for topic, _, _ in q.roles()]


def events(records: DataFrame, queues: Sequence[QueueTopics]) -> DataFrame:
    """One event per record of Spark's Kafka schema, with its queue and role."""
    spark = records.sparkSession
    roles = F.broadcast(_roles(spark, queues))
    joined = records.join(roles, "topic")
    own_id = _message_id("topic", "partition", "offset")
    stable_id = _header(headers.MESSAGE_ID)
    role = F.col("role")
    is_marker = role == MARKERS
    wire_type = _unsigned(F.substring("value", 1, 1)).cast("int")
    copy_partition = _unsigned(F.substring("key", 1, _PARTITION_BYTES)).try_cast("int")
    copy_offset = _unsigned(F.substring("key", 1 + _PARTITION_BYTES, _OFFSET_BYTES))
    key_ok = (
        (F.length("key") == markers.KEY.size) & copy_partition.isNotNull() & copy_offset.isNotNull()
    )
    last = _range_last(wire_type)
    valid_marker = _valid_marker(key_ok, wire_type, copy_offset, last)
    # A compact range is an event per offset it covers, as kmq's markers are.
    copy_offsets = F.when(
        is_marker & valid_marker & last.isNotNull(), F.sequence(copy_offset, last)
    ).otherwise(F.array(copy_offset))
    marker_type = (
        F.when(wire_type == int(MarkerType.START_RANGE), int(MarkerType.START))
        .when(wire_type == int(MarkerType.END_RANGE), int(MarkerType.END))
        .otherwise(wire_type)
    )
    is_counts = role == COUNTS
    tally = F.when(is_counts, F.try_parse_json(F.col("value").cast("string")))
    counted = is_counts & _valid_counts(tally)
    # A counts record counts for its minute, not for when it was published.
    minute = F.when(counted, _json_count(tally, "minute"))
    at_ms = placed(F.coalesce(minute, F.unix_millis("timestamp")))
    selected = joined.select(
        "queue",
        "role",
        "partition",
        "offset",
        at_ms.alias("at_ms"),
        F.col("timestampType").alias("timestamp_type"),
        F.when(role == QUEUE, F.coalesce(stable_id, own_id))
        .when(role == DLQ, stable_id)
        .alias("kmq_id"),
        # A first copy: no kmq-id of its own (QueueProducer's), or its own coordinates.
        F.when(role == QUEUE, F.coalesce(stable_id == own_id, F.lit(True))).alias("first"),
        F.when(role == QUEUE, _has_header(headers.REDELIVERY_COUNT)).alias("redelivered"),
        F.when(role == DLQ, _header(headers.DLQ_REASON)).alias("reason"),
        F.when(is_marker, copy_partition).alias("copy_partition"),
        F.explode(copy_offsets).alias("copy_offset"),
        F.when(is_marker, marker_type).alias("marker_type"),
        F.when(counted, _tally(tally)).alias("tally"),
        (
            at_ms.isNotNull()
            & F.when(is_marker, valid_marker).when(is_counts, counted).otherwise(True)
        ).alias("valid"),
    )
    # Spark generates rows only at the top of a select: the other roles' rows
    # exploded an array of one, and their copy_offset is null here.
    return selected.withColumn("copy_offset", F.when(role == MARKERS, F.col("copy_offset")))


def placed(ms: Column) -> Column:
    """``ms`` when a run can place it in time, else null (an invalid event)."""
    return F.when(ms.between(EARLIEST_MS, LAST_MS), ms)


# markers.KEY is ">iq": an int32 queue partition, then an int64 queue offset.
_PARTITION_BYTES = struct.calcsize(">i")
_OFFSET_BYTES = markers.KEY.size - _PARTITION_BYTES


def _message_id(topic: str, partition: str, offset: str) -> Column:
    """headers.message_id on columns: a first copy's kmq-id is its own coordinates."""
    return F.concat_ws(headers.MESSAGE_ID_SEPARATOR, topic, partition, offset)


def _roles(spark: SparkSession, queues: Sequence[QueueTopics]) -> DataFrame:
    rows = [row for q in queues for row in q.roles()]
    return spark.createDataFrame(rows, "topic string, queue string, role string")


def _header(name: str) -> Column:
    """The last value of header ``name`` as text (later headers win, as in Kafka clients)."""
    found = F.filter("headers", lambda h: h["key"] == F.lit(name))
    return F.when(F.size(found) > 0, F.element_at(found, -1)["value"].cast("string"))


def _has_header(name: str) -> Column:
    return F.coalesce(F.exists("headers", lambda h: h["key"] == F.lit(name)), F.lit(False))


def _unsigned(data: Column) -> Column:
    """Big-endian bytes as a long; null when they do not fit one (ANSI casts would fail)."""
    return F.conv(F.hex(data), 16, 10).try_cast("long")


def _range_last(wire_type: Column) -> Column:
    """A compact range's last offset (markers.START_RANGE_VALUE and
    END_RANGE_VALUE); null for any other marker."""
    return F.when(
        wire_type == int(MarkerType.START_RANGE), _unsigned(F.substring("value", 10, 8))
    ).when(wire_type == int(MarkerType.END_RANGE), _unsigned(F.substring("value", 2, 8)))


def _valid_marker(key_ok: Column, wire_type: Column, first: Column, last: Column) -> Column:
    """The rules of kmq.markers.decode, on columns."""
    size = F.length("value")
    timed = (MarkerType.START, MarkerType.EXTEND)  # type byte + int64
    bare = (MarkerType.END, MarkerType.REDELIVER_NOW, MarkerType.RETURN)  # type byte alone
    fixed = (
        F.when(wire_type.isin(*map(int, timed)), size == 1 + markers.DEADLINE.size)
        .when(wire_type.isin(*map(int, bare)), size == 1)
        .when(wire_type == int(MarkerType.START_RANGE), size == markers.START_RANGE_VALUE.size)
        .when(wire_type == int(MarkerType.END_RANGE), size == markers.END_RANGE_VALUE.size)
    )
    value_ok = F.when(wire_type == int(MarkerType.REJECT), size >= 1).otherwise(
        F.coalesce(fixed, F.lit(False))
    )
    range_ok = last.isNull() | (last.between(first, first + markers.MAX_SPAN - 1))
    return F.coalesce(key_ok & value_ok & range_ok, F.lit(False))


# What the lifecycle takes from a counts record (rejected and delayed are
# counted again elsewhere: as dead letters, and as copies on the queue topic).
TALLIED = ("accepted", "released", "dead_lettered")
_COUNT_FIELDS = tuple(f.name for f in fields(ShareCounts))


def _json_count(parsed: Column, name: str) -> Column:
    return F.try_variant_get(parsed, f"$.{name}", "long")


def _tally(parsed: Column) -> Column:
    return F.struct(*(F.coalesce(_json_count(parsed, n), F.lit(0)).alias(n) for n in TALLIED))


def _valid_counts(parsed: Column) -> Column:
    """The rules of kmq.share.counts.decode, on a parsed JSON variant: an
    object with a minute, every count it names a non-negative integer (JSON's
    1.0, "1", true or null are not); other keys are ignored. The minute must
    also be one a run can place (placed()): an invalid record keeps the time
    it was written at, so a streaming run logs and counts it."""

    def integer(name: str) -> Column:
        found = F.try_variant_get(parsed, f"$.{name}", "variant")
        whole = (F.schema_of_variant(found) == "BIGINT") & (_json_count(parsed, name) >= 0)
        if name == "minute":
            return whole & placed(_json_count(parsed, name)).isNotNull()
        return found.isNull() | whole

    is_object = F.schema_of_variant(parsed).startswith("OBJECT")
    return F.coalesce(reduce(operator.and_, map(integer, _COUNT_FIELDS), is_object), F.lit(False))
