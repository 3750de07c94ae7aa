"""A local SparkSession for the session, and queues on the shared broker."""

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.session import spark_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = spark_session("local[2]", "kmqadmin-tests")
    yield session
    session.stop()


@pytest.fixture
def queue(kafka: EmbeddedBroker, topic: str) -> QueueTopics:
    """A queue whose three topics have one partition each: offsets the test can name."""
    config = QueueConfig(bootstrap_servers=kafka.bootstrap_servers, topic=topic, group_id=topic)
    config.ensure_topics(partitions=1)
    return QueueTopics(config.topic, config.markers_topic, config.dlq_topic)
