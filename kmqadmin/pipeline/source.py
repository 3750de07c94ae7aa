"""``kmq_kafka``: Kafka through PySpark's Python Data Source API.

For Spark installations without the spark-sql-kafka jar (Maven out of
reach). It takes Spark's Kafka source options (``kafka.bootstrap.servers``
and other ``kafka.*`` client settings, ``subscribe``, ``startingOffsets``,
``endingOffsets``, ``startingTimestamp``) and yields its columns, so a job
switches source by format name alone. One input partition per Kafka
partition and offset range; executors assign and seek, never join a group.
"""

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructType

from kmqadmin.kafka.admin.stretch import OffsetRange
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.pipeline.ranges import (
    EARLIEST,
    LATEST,
    Offsets,
    RangeResolver,
    parse_offsets,
    ranges,
)
from kmqadmin.pipeline.records import SPARK_SCHEMA, read_range

NAME = "kmq_kafka"
# Offsets are never committed under this group; librdkafka wants one to assign.
GROUP = "kmqadmin-pipeline"


class KafkaSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SPARK_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(_Options(self.options))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(_Options(self.options))


class _Options:
    """The options a reader needs, checked once on the driver."""

    def __init__(self, options: Mapping[str, str]) -> None:
        given = {k.lower(): v for k, v in options.items()}
        bootstrap = given.get("kafka.bootstrap.servers")
        if not bootstrap:
            raise ValueError(f"{NAME}: set option kafka.bootstrap.servers")
        self.topics = [t.strip() for t in given.get("subscribe", "").split(",") if t.strip()]
        if not self.topics:
            raise ValueError(f"{NAME}: set option subscribe (comma-separated topics)")
        extra = {
            k.removeprefix("kafka."): v
            for k, v in given.items()
            if k.startswith("kafka.") and k != "kafka.bootstrap.servers"
        }
        self.client = consumer_config(bootstrap, GROUP, {"fetch.wait.max.ms": 10, **extra})
        self.starting = given.get("startingoffsets")
        self.ending = parse_offsets(given.get("endingoffsets"), LATEST)
        stamp = given.get("startingtimestamp")
        self.timestamp_ms = int(stamp) if stamp else None

    def resolver(self) -> RangeResolver:
        return RangeResolver(self.client)


class KafkaBatchReader(DataSourceReader):
    def __init__(self, options: _Options) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        options = self.options
        resolver = options.resolver()
        try:
            parts = resolver.partitions(options.topics)
            starting = parse_offsets(options.starting, EARLIEST)
            starts = resolver.starts(parts, starting, options.timestamp_ms)
            ends = resolver.ends(parts, options.ending)
        finally:
            resolver.close()
        found = [InputPartition(r) for r in ranges(starts, ends)]
        # Spark wants at least one partition; an empty range reads nothing.
        return found or [InputPartition(OffsetRange(options.topics[0], 0, 0, 0))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value.size:
            yield from read_range(self.options.client, partition.value)


class KafkaStreamReader(DataSourceStreamReader):
    """Offsets are Spark's Kafka source's JSON map, kept in the checkpoint."""

    def __init__(self, options: _Options) -> None:
        self.options = options

    def initialOffset(self) -> Offsets:
        options = self.options
        resolver = options.resolver()
        try:
            parts = resolver.partitions(options.topics)
            # A stream starts at the end unless told otherwise, as Spark's does.
            starting = parse_offsets(options.starting, LATEST)
            if starting == LATEST and options.timestamp_ms is None:
                return resolver.latest(parts)
            return resolver.starts(parts, starting, options.timestamp_ms)
        finally:
            resolver.close()

    def latestOffset(self, start: Offsets, limit: Any) -> Offsets:
        resolver = self.options.resolver()
        try:
            return resolver.latest(resolver.partitions(self.options.topics))
        finally:
            resolver.close()

    def partitions(self, start: Offsets, end: Offsets) -> list[InputPartition]:
        return [InputPartition(r) for r in ranges(start, end)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from read_range(self.options.client, partition.value)
