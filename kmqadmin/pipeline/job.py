"""The analytics job: Kafka in, lifecycle facts and per-minute aggregates out.

One job, two ways to run it. A batch run reads a window of the topics and
recomputes the hours it covers. A streaming run reads what is new each
micro-batch, appends it to an event log (Parquet), and recomputes the hours
the new events touch from that log; Spark's checkpoint holds its offsets.
Either writes Parquet partitioned by queue, date and hour, overwriting the
hours it recomputed, and hands the minute rows to ``on_minutes`` (the Django
side upserts them for the console's charts).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, DataFrameReader, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamReader, StreamingQuery
from pyspark.sql.types import StructType

from kmqadmin.kafka.client.security.cluster import ClusterSecurity
from kmqadmin.kafka.client.security.masking import Masked
from kmqadmin.pipeline.events import QueueTopics, events, placed, topics
from kmqadmin.pipeline.lifecycle import analyse, partition_columns, skipped
from kmqadmin.pipeline.session import SPARK_KAFKA, SPARK_KAFKA_OPTIONS, kafka_format

HOUR_MS = 3_600_000
PARTITIONS = ["queue", "date", "hour"]

MinuteRows = list[dict[str, Any]]


@dataclass(frozen=True)
class PipelineConfig:
    bootstrap_servers: str
    queues: Sequence[QueueTopics]
    output_dir: Path
    source: str = "auto"  # KMQ_PIPELINE_SOURCE: auto, spark or python
    lookback_ms: int = HOUR_MS  # how far before a window its messages may start
    kafka_config: dict[str, str] = field(default_factory=dict)
    # The cluster's SASL / TLS settings, read (secrets included) when a run starts.
    security: ClusterSecurity | None = None


@dataclass(frozen=True)
class RunResult:
    since_ms: int
    facts: int
    minutes: MinuteRows
    # Per queue: markers (kmq) or counts records (share) that did not decode.
    skipped: dict[str, int]


class AnalyticsJob:
    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        if not config.queues:
            raise ValueError("no queues to analyse: register a queue first")
        self.spark = spark
        self.config = config
        self.format = kafka_format(spark, config.source)

    def run_batch(self, since_ms: int) -> RunResult:
        """Recomputes every hour from ``since_ms``'s on (rounded down to the hour)."""
        since = since_ms - since_ms % HOUR_MS
        start = since - self.config.lookback_ms
        reader = self._kafka(self.spark.read)
        if start > 0:
            reader = reader.option("startingTimestamp", str(start))
        found = events(reader.load(), self.config.queues).persist()
        try:
            return self._recompute(found, since)
        finally:
            found.unpersist()

    def run_stream(
        self,
        checkpoint_dir: Path,
        on_result: Callable[[RunResult], None],
        trigger: dict[str, Any],
    ) -> StreamingQuery:
        """Starts the streaming run; ``trigger`` as DataStreamWriter.trigger
        takes it (``{"processingTime": "30 seconds"}``, ``{"availableNow": True}``)."""
        stream = self._kafka(self.spark.readStream).option("startingOffsets", "earliest").load()

        def batch(records: DataFrame, batch_id: int) -> None:
            result = self._apply_batch(records)
            if result is not None:
                on_result(result)

        return (
            stream.writeStream.foreachBatch(batch)
            .option("checkpointLocation", str(checkpoint_dir))
            .trigger(**trigger)
            .start()
        )

    def _apply_batch(self, records: DataFrame) -> RunResult | None:
        new = events(records, self.config.queues).persist()
        try:
            first = new.agg(F.min("at_ms")).first()[0]
            if first is None:
                return None
            # An event with no time (events.placed) belongs to no hour: not logged.
            timed = new.filter(F.col("at_ms").isNotNull())
            logged = timed.select("*", *partition_columns("at_ms"))
            logged.write.mode("append").partitionBy(*PARTITIONS).parquet(str(self._path("events")))
        finally:
            new.unpersist()
        since = first - first % HOUR_MS
        start = since - self.config.lookback_ms
        log = read_log(self.spark, self._path("events"), start, logged.schema).persist()
        try:
            return self._recompute(log, since)
        finally:
            log.unpersist()

    def _recompute(self, found: DataFrame, since: int) -> RunResult:
        share = [q.queue for q in self.config.queues if q.is_share]
        result = analyse(found, since, share)
        facts = result.facts.persist()
        minutes = result.minutes.persist()
        try:
            facts.write.mode("overwrite").partitionBy(*PARTITIONS).parquet(str(self._path("facts")))
            minutes.write.mode("overwrite").partitionBy(*PARTITIONS).parquet(
                str(self._path("minutes"))
            )
            rows = [row.asDict() for row in minutes.drop("date", "hour").collect()]
            bad = {row["queue"]: row["count"] for row in skipped(found).collect()}
            return RunResult(since, facts.count(), rows, bad)
        finally:
            facts.unpersist()
            minutes.unpersist()

    def _kafka[R: (DataFrameReader, DataStreamReader)](self, reader: R) -> R:
        return reader.format(self.format).options(**kafka_options(self.config, self.format))

    def _path(self, table: str) -> Path:
        return self.config.output_dir / table


def read_log(spark: SparkSession, path: Path, start_ms: int, schema: StructType) -> DataFrame:
    """The streaming run's event log from ``start_ms`` on, each event once.

    Read with ``schema``, this version's columns: an upgrade keeps the log,
    whose older files lack the newer columns (they read as null), and
    Parquet alone takes the columns of whichever file it opens first.
    Events an older version logged as valid at a time no run can place
    (a counts minute in year 33658) are invalid now.
    """
    return (
        spark.read.schema(schema)
        .parquet(str(path))
        # date prunes the log's directories; at_ms is the exact bound.
        .filter(F.col("date") >= F.to_date(F.timestamp_millis(F.lit(start_ms))))
        .filter(F.col("at_ms") >= start_ms)
        # A micro-batch replayed after a crash appended its events twice (a
        # compact range marker is an event per offset it covers: copy_offset).
        .dropDuplicates(["queue", "role", "partition", "offset", "copy_offset"])
        .withColumn("valid", F.col("valid") & placed(F.col("at_ms")).isNotNull())
    )


def kafka_options(config: PipelineConfig, source_format: str) -> Masked:
    """The same options for either source; Spark's also needs SPARK_KAFKA_OPTIONS.

    Spark's source runs the Java client, ours librdkafka: the cluster's
    security settings have different names in each.
    """
    options = Masked()
    if source_format == SPARK_KAFKA:
        options |= SPARK_KAFKA_OPTIONS | {
            "startingOffsetsByTimestampStrategy": "latest",
            "failOnDataLoss": "false",
        }
    client = dict(config.kafka_config)
    if config.security is not None:
        client |= (
            config.security.java() if source_format == SPARK_KAFKA else config.security.librdkafka()
        )
    options |= {f"kafka.{k}": v for k, v in client.items()}
    options |= {
        "kafka.bootstrap.servers": config.bootstrap_servers,
        "subscribe": ",".join(topics(config.queues)),
    }
    return options
