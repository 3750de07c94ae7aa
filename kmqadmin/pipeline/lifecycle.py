"""The lifecycle of every message, from events (see events.py).

Copies of a message share its kmq-id; markers name a copy by its queue
coordinates; dead letters carry the kmq-id. An end marker means one of three
things, told apart as kmq.readers.lifecycle tells them for the console: a
redelivery's end when a redelivered copy follows its copy; otherwise a move
to the DLQ while the message has letters not yet accounted for (in marker
order); otherwise an ack.

A share queue has no markers: the broker hands out, locks and counts its
deliveries and tells no one when a record was acked. What is knowable per
message is kept: when it was produced, its copies on the queue topic
(delayed retries, redrives) and its dead letters with their reason. It is
dead-lettered while its latest letter was made from its latest copy (a
letter keeps its copy's timestamp; a redrive is a later copy); otherwise
its state is BROKER, never "acked" nor "in flight", and its delivery
starts, deliveries, acked_ms and dead_lettered_ms (the letter does not say
when it was written) are null: unknown, not none. Its minutes count from
its clients' counts records (kmq.share.counts): acks as accepted, moves to
the DLQ in the minute they happened (as a kmq queue counts its end
markers'), and releases, which the broker redelivers without a copy, as
redeliveries; its latency and processing quantiles are null, as there is
no per-message ack time to take them of.

Facts are kept for messages whose first copy was produced at or after
``since_ms``; minutes from ``since_ms`` on. Events before it (the lookback)
only inform them: a redelivery or ack after ``since_ms`` of a message
produced a little earlier still finds its copies.
"""

from collections.abc import Collection
from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kmqadmin.kmq.markers import MarkerType
from kmqadmin.pipeline.columns import COUNTS, QUANTILE_KINDS, QUANTILES, quantile_column
from kmqadmin.pipeline.events import COUNTS as COUNTS_ROLE
from kmqadmin.pipeline.events import DLQ, MARKERS, QUEUE, TALLIED

START, END = int(MarkerType.START), int(MarkerType.END)
ACKED, DEAD, IN_FLIGHT = "acked", "dead-lettered", "in flight"
# A share queue's message that is not dead-lettered: acked, in flight or
# waiting, only the broker knows.
BROKER = "tracked by the broker"
TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}

_COPY = ["queue", "partition", "offset"]


@dataclass(frozen=True)
class LifecycleTables:
    """What analyse() computes: the two tables a run writes (kmq.Lifecycle,
    by contrast, is one message's story as the console tells it)."""

    facts: DataFrame  # one row per message
    minutes: DataFrame  # one row per queue and minute


def analyse(events: DataFrame, since_ms: int, share: Collection[str]) -> LifecycleTables:
    """``share`` names the share queues among the events' queues; invalid
    events are left out (skipped() counts them)."""
    events = events.filter("valid")
    copies = _copies(events)
    marked = _marked(events, copies)
    letters = _letters(events)
    ends = _classified_ends(marked, letters)
    is_share = F.col("queue").isin(*share) if share else F.lit(False)
    return LifecycleTables(
        _facts(copies, marked, ends, letters, since_ms, is_share),
        _minutes(copies, marked, ends, _tallies(events), since_ms),
    )


def skipped(events: DataFrame) -> DataFrame:
    """Events that are not valid (events.events), per queue."""
    return events.filter(~F.col("valid")).groupBy("queue").count()


def _copies(events: DataFrame) -> DataFrame:
    """Queue records, each with whether the copy after it is a redelivery."""
    by_message = Window.partitionBy("queue", "kmq_id").orderBy("offset")
    copies = events.filter(F.col("role") == QUEUE).select(
        *_COPY, "at_ms", "timestamp_type", "kmq_id", "first", "redelivered"
    )
    return copies.withColumns(
        {
            "redelivered_next": F.coalesce(F.lead("redelivered").over(by_message), F.lit(False)),
            "last": F.lead("offset").over(by_message).isNull(),
        }
    )


def _marked(events: DataFrame, copies: DataFrame) -> DataFrame:
    """Markers joined to the copy they name; markers of copies not read are dropped."""
    markers = events.filter(F.col("role") == MARKERS).select(
        "queue",
        F.col("copy_partition").alias("partition"),
        F.col("copy_offset").alias("offset"),
        F.col("offset").alias("marker_offset"),
        F.col("at_ms").alias("marker_ms"),
        "marker_type",
    )
    return markers.join(copies.select(*_COPY, "kmq_id", "redelivered_next", "last"), _COPY)


def _classified_ends(marked: DataFrame, letters: DataFrame) -> DataFrame:
    """The first end marker of each copy that is not a redelivery's, as ack or dead letter."""
    per_copy = Window.partitionBy(*_COPY).orderBy("marker_offset")
    ends = (
        marked.filter(F.col("marker_type") == END)
        .withColumn("nth", F.row_number().over(per_copy))
        .filter((F.col("nth") == 1) & ~F.col("redelivered_next"))
    )
    # One markers partition holds all of a message's markers: offsets order them.
    per_message = Window.partitionBy("queue", "kmq_id").orderBy("marker_offset")
    return (
        ends.withColumn("k", F.row_number().over(per_message))
        .join(letters.select("queue", "kmq_id", "letters"), ["queue", "kmq_id"], "left")
        .withColumn(
            "outcome", F.when(F.col("k") <= F.coalesce("letters", F.lit(0)), DEAD).otherwise(ACKED)
        )
        .select(*_COPY, "kmq_id", "last", "marker_ms", "outcome")
    )


def _letters(events: DataFrame) -> DataFrame:
    """Per message: how many dead letters it has, and the latest one's reason."""
    return (
        events.filter((F.col("role") == DLQ) & F.col("kmq_id").isNotNull())
        .groupBy("queue", "kmq_id")
        .agg(
            F.count("*").alias("letters"),
            F.max_by("reason", "offset").alias("dlq_reason"),
            F.max("at_ms").alias("lettered_copy_ms"),  # a letter keeps its copy's timestamp
        )
    )


def _tallies(events: DataFrame) -> DataFrame:
    """Share queues' counts records, as the minute columns they add to."""
    return events.filter(F.col("role") == COUNTS_ROLE).select(
        "queue",
        F.col("at_ms").alias("ms"),
        *(F.col(f"tally.{name}").alias(column) for name, column in _TALLY_COLUMNS.items()),
    )


# A share queue's counts: a release is a redelivery the broker makes without a copy.
_TALLY_COLUMNS = dict(zip(TALLIED, ("acked", "redelivered", "dead_lettered"), strict=True))


def _facts(
    copies: DataFrame,
    marked: DataFrame,
    ends: DataFrame,
    letters: DataFrame,
    since_ms: int,
    is_share: Column,
) -> DataFrame:
    first = copies.filter(F.col("first") & (F.col("at_ms") >= since_ms)).select(
        "queue",
        "kmq_id",
        "partition",
        "offset",
        F.col("at_ms").alias("produced_ms"),
        _timestamp_type(F.col("timestamp_type")).alias("timestamp_type"),
    )
    starts = (
        marked.filter(F.col("marker_type") == START)
        .groupBy("queue", "kmq_id")
        .agg(F.array_sort(F.collect_list("marker_ms")).alias("delivery_starts"))
    )
    final = ends.filter("last").select(
        "queue", "kmq_id", F.col("outcome").alias("state"), F.col("marker_ms").alias("ended_ms")
    )
    copied = copies.groupBy("queue", "kmq_id").agg(
        F.count("*").alias("copies"), F.max("at_ms").alias("copied_ms")
    )
    facts = (
        first.join(starts, ["queue", "kmq_id"], "left")
        .join(final, ["queue", "kmq_id"], "left")
        .join(copied, ["queue", "kmq_id"])
        .join(
            letters.select("queue", "kmq_id", "dlq_reason", "lettered_copy_ms"),
            ["queue", "kmq_id"],
            "left",
        )
    )
    lettered_last = F.coalesce(F.col("lettered_copy_ms") >= F.col("copied_ms"), F.lit(False))
    state = F.when(is_share, F.when(lettered_last, DEAD).otherwise(BROKER)).otherwise(
        F.coalesce("state", F.lit(IN_FLIGHT))
    )
    known = ~is_share  # the markers' measures
    return facts.select(
        "queue",
        "kmq_id",
        "partition",
        "offset",
        "produced_ms",
        "timestamp_type",
        F.when(known, F.coalesce("delivery_starts", F.array().cast("array<bigint>"))).alias(
            "delivery_starts"
        ),
        F.when(known, F.coalesce(F.size("delivery_starts"), F.lit(0))).alias("deliveries"),
        "copies",
        F.when(state == ACKED, F.col("ended_ms")).alias("acked_ms"),
        F.when(state == DEAD, F.col("ended_ms")).alias("dead_lettered_ms"),
        state.alias("state"),
        "dlq_reason",
        *partition_columns("produced_ms"),
    )


def _minutes(
    copies: DataFrame, marked: DataFrame, ends: DataFrame, tallies: DataFrame, since_ms: int
) -> DataFrame:
    """Per queue and minute: counts, and latency / processing time quantiles
    of the acks in that minute (each ack against its message's first copy
    and its copy's latest start; a share queue's acks have no time)."""
    produced = copies.filter("first").select("queue", F.col("at_ms").alias("ms"), _one("produced"))
    redelivered = copies.filter("redelivered").select(
        "queue", F.col("at_ms").alias("ms"), _one("redelivered")
    )
    produced_at = copies.filter("first").select(
        "queue", "kmq_id", F.col("at_ms").alias("produced_ms")
    )
    started_at = (
        marked.filter(F.col("marker_type") == START)
        .groupBy(*_COPY)
        .agg(F.max("marker_ms").alias("started_ms"))
    )
    outcomes = (
        ends.join(produced_at, ["queue", "kmq_id"], "left")
        .join(started_at, _COPY, "left")
        .select(
            "queue",
            F.col("marker_ms").alias("ms"),
            F.when(F.col("outcome") == ACKED, 1).otherwise(0).alias("acked"),
            F.when(F.col("outcome") == DEAD, 1).otherwise(0).alias("dead_lettered"),
            F.when(F.col("outcome") == ACKED, F.col("marker_ms") - F.col("produced_ms")).alias(
                "latency_ms"
            ),
            F.when(F.col("outcome") == ACKED, F.col("marker_ms") - F.col("started_ms")).alias(
                "processing_ms"
            ),
        )
    )
    counted = reduce(
        lambda a, b: a.unionByName(b, allowMissingColumns=True),
        (produced, redelivered, outcomes, tallies),
    )
    minute = (F.col("ms") - F.col("ms") % 60_000).alias("minute_ms")
    grouped = counted.filter(F.col("ms") >= since_ms).groupBy("queue", minute)
    totals = grouped.agg(
        *(F.coalesce(F.sum(c), F.lit(0)).cast("long").alias(c) for c in COUNTS),
        *(
            F.percentile(f"{kind}_ms", F.array(*map(F.lit, QUANTILES))).alias(kind)
            for kind in QUANTILE_KINDS
        ),
    )
    return totals.select(
        "queue",
        "minute_ms",
        *COUNTS,
        *(
            F.col(kind)[i].alias(quantile_column(kind, q))
            for kind in QUANTILE_KINDS
            for i, q in enumerate(QUANTILES)
        ),
        *partition_columns("minute_ms"),
    )


def _one(name: str) -> Column:
    return F.lit(1).alias(name)


def _timestamp_type(code: Column) -> Column:
    result = F.lit(None).cast("string")
    for value, name in TIMESTAMP_TYPES.items():
        result = F.when(code == value, name).otherwise(result)
    return result


def partition_columns(ms: str) -> list[Column]:
    """date and hour (UTC) of an epoch-ms column: the Parquet partitions a
    run overwrites whole."""
    at = F.timestamp_millis(F.col(ms))
    return [F.to_date(at).alias("date"), F.hour(at).alias("hour")]
