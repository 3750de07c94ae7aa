"""Analytics pipeline benchmark; prints one JSON document.

    .venv/bin/python bench/pipeline.py [--messages 1000000] [--partitions 4]

Fills a queue with ``--messages`` records, each with a start and an end
marker, then measures on one embedded broker, through both Kafka sources
(KMQ_PIPELINE_SOURCE=spark: spark-sql-kafka; =python: our kmq_kafka):
- read: records/s of a Spark read of the queue (every column materialised)
  through each source, against a plain single-process confluent-kafka read
  of the same records in the same run (every field a job uses touched);
- job: wall time of the whole batch job over the queue and its markers
  (read, lifecycle, Parquet, minute rows collected) with each source, run
  twice each in turns (``seconds`` is the second), and whether the two
  sources gave the same facts count and minute rows.
"""

import argparse
import importlib.metadata
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, TopicPartition
from pyspark.sql import functions as F

from bench.common import report
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kmq import QueueConfig, markers
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import AnalyticsJob, PipelineConfig
from kmqadmin.pipeline.session import (
    SPARK_KAFKA,
    SPARK_KAFKA_OPTIONS,
    kafka_format,
    spark_jars,
    spark_session,
)

SOURCES = ("spark", "python")  # KMQ_PIPELINE_SOURCE


def fill(bootstrap: str, messages: int, partitions: int, size: int) -> QueueTopics:
    """The queue, then a start and an end marker for every record."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    config = QueueConfig(bootstrap_servers=bootstrap, topic=name, group_id=name)
    config.ensure_topics(partitions=partitions)
    producer = Producer(
        producer_config(bootstrap, extra={"linger.ms": 20, "queue.buffering.max.messages": 500_000})
    )
    payload = b"x" * size
    per_partition = messages // partitions

    def send(topic: str, partition: int, key: bytes | None, value: bytes) -> None:
        while True:
            try:
                producer.produce(topic, value=value, key=key, partition=partition)
                return
            except BufferError:
                producer.poll(0.05)

    for _ in range(per_partition):
        for p in range(partitions):
            send(config.topic, p, None, payload)
    deadline = markers.start(now_ms() + 30_000)
    for value in (deadline, markers.END):
        for offset in range(per_partition):
            for p in range(partitions):
                send(config.markers_topic, p, markers.encode_key(p, offset), value)
    producer.flush()
    return QueueTopics(config.topic, config.markers_topic, config.dlq_topic)


def plain_read(bootstrap: str, topic: str, partitions: int, total: int) -> float:
    """Records/s of one process reading the topic with confluent-kafka."""
    consumer = Consumer(consumer_config(bootstrap, f"plain-{uuid.uuid4().hex}"))
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    started, seen, size = time.perf_counter(), 0, 0
    while seen < total:
        for record in consumer.consume(10_000, 1.0):
            if record.error() is None:
                seen += 1
                size += len(record.value())
                record.key(), record.timestamp(), record.headers()
    elapsed = time.perf_counter() - started
    consumer.close()
    return seen / elapsed


def spark_read(spark, bootstrap: str, topic: str, source: str) -> tuple[float, int]:
    """Records/s of a Spark read through ``source``, every column materialised."""
    started = time.perf_counter()
    name = kafka_format(spark, source)
    options = SPARK_KAFKA_OPTIONS if name == SPARK_KAFKA else {}
    frame = (
        spark.read.format(name)
        .options(**options)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
    )
    row = frame.select(
        F.count("*"),
        F.sum(F.length("value")),
        F.count("key"),
        F.max("timestamp"),
        F.sum(F.size("headers")),
        F.max("offset"),
    ).first()
    elapsed = time.perf_counter() - started
    return row[0] / elapsed, row[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--size", type=int, default=100)
    args = parser.parse_args()
    spark = spark_session("local[*]", "kmqadmin-bench")
    state: dict[str, QueueTopics] = {}

    def read(bootstrap: str) -> dict:
        started = time.perf_counter()
        queue = state["queue"] = fill(bootstrap, args.messages, args.partitions, args.size)
        filled = time.perf_counter() - started
        total = args.messages - args.messages % args.partitions
        plain = plain_read(bootstrap, queue.queue, args.partitions, total)
        found: dict[str, object] = {
            "records": total,
            "fill_s": round(filled, 1),
            "plain_confluent_kafka_records_per_s": round(plain),
        }
        # In this order, in one JVM: the first read of all also starts Spark's executors.
        for source in SOURCES:
            first, count = spark_read(spark, bootstrap, queue.queue, source)
            warm, _ = spark_read(spark, bootstrap, queue.queue, source)
            assert count == total, f"the {source} source read {count} of {total} records"
            found[source] = {
                "records_per_s": round(warm),
                "first_run_records_per_s": round(first),
                "ratio_to_plain": round(warm / plain, 2),
            }
        return found

    def job(bootstrap: str) -> dict:
        queue = state["queue"]
        found: dict[str, object] = {
            "queue_records": args.messages,
            "marker_records": 2 * args.messages,
        }
        results, seconds = {}, {source: [] for source in SOURCES}
        # Twice each, taking turns: the first job of all also compiles the
        # lifecycle's query plans, which the later ones reuse.
        for source in [*SOURCES, *SOURCES]:
            with tempfile.TemporaryDirectory() as out:
                config = PipelineConfig(bootstrap, [queue], Path(out), source=source)
                started = time.perf_counter()
                results[source] = AnalyticsJob(spark, config).run_batch(0)
                seconds[source].append(round(time.perf_counter() - started, 1))
        for source in SOURCES:
            found[source] = {
                "seconds": seconds[source][1],
                "first_run_seconds": seconds[source][0],
                "messages_in_facts": results[source].facts,
                "minutes": len(results[source].minutes),
            }
        by_spark, by_python = (results[s] for s in SOURCES)
        found["same_result"] = by_spark.facts == by_python.facts and sorted(
            by_spark.minutes, key=repr
        ) == sorted(by_python.minutes, key=repr)
        return found

    versions = {
        "pyspark": importlib.metadata.version("pyspark"),
        "spark_kafka_jars": [jar.name for jar in spark_jars()],
    }
    report({"versions": lambda bootstrap: versions, "read": read, "job": job})
    spark.stop()


if __name__ == "__main__":
    main()
