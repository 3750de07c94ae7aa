"""The analytics pipeline reads a secured cluster with either source: ours
(librdkafka) and Spark's own (the Java client, whose settings differ)."""

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kmqadmin.console.models import Queue
from kmqadmin.kafka.client.security.masking import MASK
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import PipelineConfig, kafka_options
from kmqadmin.pipeline.session import NAME, SPARK_KAFKA, kafka_format
from tests.queue_helpers import send
from tests.security.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("source", "expected"), [("python", NAME), ("spark", SPARK_KAFKA)])
def test_both_sources_read_a_sasl_ssl_cluster(
    spark: SparkSession, secure_queue: Queue, source: str, expected: str, tmp_path: Path
) -> None:
    send(secure_queue.config(), 3)
    cluster = secure_queue.cluster
    config = PipelineConfig(
        bootstrap_servers=cluster.bootstrap,
        queues=[
            QueueTopics(secure_queue.topic, secure_queue.markers_topic, secure_queue.dlq_topic)
        ],
        output_dir=tmp_path,
        security=cluster.security(),
    )
    source_format = kafka_format(spark, source)
    assert source_format == expected
    options = kafka_options(config, source_format)
    assert PASSWORD not in repr(options)
    assert MASK in repr(options)

    rows = spark.read.format(source_format).options(**options).load().collect()

    assert sorted(r["value"] for r in rows) == [b"m0", b"m1", b"m2"]
