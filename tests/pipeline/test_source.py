"""The kmq_kafka data source against the real broker and against Spark's own
Kafka source, and how a job picks its source."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession
from pyspark.sql.utils import AnalysisException

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.session import (
    NAME,
    SPARK_KAFKA,
    SPARK_KAFKA_OPTIONS,
    has_spark_kafka,
    kafka_format,
)
from tests.pipeline import scenario
from tests.process import ROOT, env


def _fill(kafka: EmbeddedBroker, topic: str, n: int) -> None:
    """``n`` records in as few batches as the producer makes: a range ends
    inside a batch."""
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 50})
    for i in range(n):
        producer.produce(topic, value=b"%d" % i, partition=0, headers=[("n", b"%d" % i)])
    producer.flush(10)


def _read(
    spark: SparkSession, kafka: EmbeddedBroker, topic: str, source: str = "python", **options: str
):
    if source == "spark":
        options = SPARK_KAFKA_OPTIONS | options
    reader = spark.read.format(kafka_format(spark, source)).options(
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


def test_both_sources_read_the_same_records_with_the_same_columns(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics
) -> None:
    scenario.write(kafka.bootstrap_servers, queue, 1)
    scenario.write(kafka.bootstrap_servers, queue, 2)
    topics = f"{queue.queue},{queue.markers},{queue.dlq}"

    read = {source: _read(spark, kafka, topics, source) for source in ("spark", "python")}

    assert read["spark"].schema == read["python"].schema
    rows = {s: sorted(map(tuple, frame.collect()), key=repr) for s, frame in read.items()}
    assert len(rows["spark"]) == 10 + 17 + 1  # queue, markers, DLQ
    assert rows["spark"] == rows["python"]


def test_both_sources_read_committed_records_only_and_stop_at_an_open_transaction(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics
) -> None:
    plain = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})
    txn = Producer({"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": queue.queue})
    txn.init_transactions(10)

    def transaction(values: list[bytes], commit: bool | None) -> None:
        txn.begin_transaction()
        for value in values:
            txn.produce(queue.queue, value=value, partition=0)
        txn.flush(10)
        if commit is not None:
            (txn.commit_transaction if commit else txn.abort_transaction)(10)

    def send(value: bytes) -> None:
        plain.produce(queue.queue, value=value, partition=0)
        plain.flush(10)

    # Offsets vary: a transaction's marker is written after commit returns (KIP-890).
    send(b"a")
    transaction([b"aborted-1", b"aborted-2"], commit=False)
    transaction([b"b", b"c"], commit=True)
    send(b"d")
    transaction([b"aborted-3"], commit=False)
    transaction([b"e"], commit=True)
    transaction([b"open"], commit=None)  # still open: the read ends before it
    try:
        read = {
            source: [
                (r["offset"], r["value"])
                for r in _read(spark, kafka, queue.queue, source).orderBy("offset").collect()
            ]
            for source in ("spark", "python")
        }
    finally:
        txn.abort_transaction(10)

    assert [value for _, value in read["python"]] == [b"a", b"b", b"c", b"d", b"e"]
    assert read["spark"] == read["python"]


def test_the_source_is_chosen_by_configuration(spark: SparkSession) -> None:
    # `make deps` puts spark-sql-kafka in .jars/spark, and the session loads it.
    assert has_spark_kafka(spark)
    assert kafka_format(spark, "auto") == SPARK_KAFKA
    assert kafka_format(spark, "spark") == SPARK_KAFKA
    assert kafka_format(spark, "python") == NAME


_WITHOUT_JARS = textwrap.dedent(
    """
    from kmqadmin.pipeline.session import SparkKafkaMissing, kafka_format, spark_session

    spark = spark_session("local[1]", "kmqadmin-no-jars")
    try:
        print("auto:", kafka_format(spark, "auto"))
        try:
            kafka_format(spark, "spark")
        except SparkKafkaMissing as exc:
            print("spark:", exc)
    finally:
        spark.stop()
    """
)


def test_without_the_jar_folder_auto_reads_with_ours_and_spark_names_make_deps(
    tmp_path: Path,
) -> None:
    # A session of its own: one process's JVM keeps the classpath it started with.
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_JARS],
        cwd=ROOT,
        env=env(KMQ_SPARK_JARS=str(tmp_path / "absent")),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"auto: {NAME}" in lines
    assert any(line.startswith("spark: ") and "`make deps`" in line for line in lines), lines
