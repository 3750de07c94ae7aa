"""Queues on the shared broker for the pipeline tests (``spark`` is suite-wide)."""

import pytest

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from kmqadmin.pipeline.events import QueueTopics


@pytest.fixture
def queue(kafka: EmbeddedBroker, topic: str) -> QueueTopics:
    """A queue whose three topics have one partition each: offsets the test can name."""
    config = QueueConfig(bootstrap_servers=kafka.bootstrap_servers, topic=topic, group_id=topic)
    config.ensure_topics(partitions=1)
    return QueueTopics(config.topic, config.markers_topic, config.dlq_topic)
