"""The kmq_kafka data source against the real broker, and how a job picks its source."""

import json

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession
from pyspark.sql.utils import AnalysisException

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.session import NAME, SPARK_KAFKA, has_spark_kafka, kafka_format


def _fill(kafka: EmbeddedBroker, topic: str, n: int) -> None:
    """``n`` records in as few batches as the producer makes: the broker's
    reported end may then stop short of the last batch's records."""
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 50})
    for i in range(n):
        producer.produce(topic, value=b"%d" % i, partition=0, headers=[("n", b"%d" % i)])
    producer.flush(10)


def _read(spark: SparkSession, kafka: EmbeddedBroker, topic: str, **options: str):
    reader = spark.read.format(kafka_format(spark, "python")).options(
        **{"kafka.bootstrap.servers": kafka.bootstrap_servers, "subscribe": topic, **options}
    )
    return reader.load()


def test_reads_every_record_of_batched_writes_with_their_columns(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics
) -> None:
    _fill(kafka, queue.queue, 500)

    rows = _read(spark, kafka, queue.queue).orderBy("offset").collect()

    assert [r["offset"] for r in rows] == list(range(500))
    assert [r["value"] for r in rows] == [b"%d" % i for i in range(500)]
    assert rows[7]["headers"][0].asDict() == {"key": "n", "value": b"7"}
    assert {(r["topic"], r["partition"], r["timestampType"]) for r in rows} == {(queue.queue, 0, 0)}


def test_offset_options_bound_the_read(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics
) -> None:
    _fill(kafka, queue.queue, 100)
    bounds = {
        "startingOffsets": json.dumps({queue.queue: {"0": 10}}),
        "endingOffsets": json.dumps({queue.queue: {"0": 25}}),
    }

    offsets = [r["offset"] for r in _read(spark, kafka, queue.queue, **bounds).collect()]

    assert sorted(offsets) == list(range(10, 25))
    # Spark's JSON conventions: -2 the earliest, -1 the latest.
    bounds = {
        "startingOffsets": json.dumps({queue.queue: {"0": -2}}),
        "endingOffsets": json.dumps({queue.queue: {"0": -1}}),
    }
    offsets = [r["offset"] for r in _read(spark, kafka, queue.queue, **bounds).collect()]
    assert sorted(offsets) == list(range(100))


def test_missing_options_are_named(spark: SparkSession, kafka: EmbeddedBroker) -> None:
    name = kafka_format(spark, "python")
    with pytest.raises(AnalysisException, match=r"set option kafka\.bootstrap\.servers"):
        spark.read.format(name).option("subscribe", "x").load().collect()
    with pytest.raises(AnalysisException, match="set option subscribe"):
        reader = spark.read.format(name).option("kafka.bootstrap.servers", kafka.bootstrap_servers)
        reader.load().collect()
    with pytest.raises(AnalysisException, match="topic gone does not exist"):
        _read(spark, kafka, "gone").collect()


def test_the_source_is_chosen_by_configuration(spark: SparkSession) -> None:
    # No spark-sql-kafka jar here (Maven is out of reach): auto falls back to ours.
    assert not has_spark_kafka(spark)
    assert kafka_format(spark, "auto") == NAME
    assert kafka_format(spark, "python") == NAME
    assert kafka_format(spark, "spark") == SPARK_KAFKA
