"""Queues on the shared broker for the pipeline tests (``spark`` is suite-wide)."""

import pytest

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from kmqadmin.pipeline.events import QueueTopics

# The scenario's records carry timestamps of 2026-01-01 (scenario.T): with the
# default 7-day retention, Kafka's next retention check (every 5 minutes)
# deletes them from under a test that has not read them yet.
KEEP = {"retention.ms": "-1"}


def one_partition_queue(kafka: EmbeddedBroker, topic: str) -> QueueTopics:
    """A queue whose three topics have one partition each: offsets the test can name."""
    config = QueueConfig(bootstrap_servers=kafka.bootstrap_servers, topic=topic, group_id=topic)
    names = [config.topic, config.markers_topic, config.dlq_topic]
    ensure_topics(kafka.bootstrap_servers, dict.fromkeys(names, 1), dict.fromkeys(names, KEEP))
    return QueueTopics(*names)


@pytest.fixture
def queue(kafka: EmbeddedBroker, topic: str) -> QueueTopics:
    return one_partition_queue(kafka, topic)
