"""Queue fixtures on the shared embedded broker."""

from collections.abc import Iterator

import pytest
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.kafka.snapshot import read_topic
from kmqadmin.kmq import QueueConfig, RedeliveryTracker


@pytest.fixture
def queue(kafka: EmbeddedBroker, topic: str) -> QueueConfig:
    config = QueueConfig(
        bootstrap_servers=kafka.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=1000,
        max_redeliveries=3,
    )
    config.ensure_topics(partitions=3)
    return config


@pytest.fixture
def tracker(queue: QueueConfig) -> Iterator[RedeliveryTracker]:
    t = RedeliveryTracker(queue)
    t.start()
    yield t
    t.stop()


def read_all(config: QueueConfig, topic: str, partitions: int = 3) -> list[KafkaMessage]:
    return read_topic(config.bootstrap_servers, topic, partitions)
