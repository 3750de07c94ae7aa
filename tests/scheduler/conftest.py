"""Scheduler fixtures on the shared embedded broker."""

import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.kafka.snapshot import read_topic
from kmqadmin.kafka.topics import ensure_topics
from kmqadmin.scheduler import Scheduler, SchedulerConfig, wire

PARTITIONS = 3


@pytest.fixture
def schedules(kafka: EmbeddedBroker) -> SchedulerConfig:
    name = f"s-{uuid.uuid4().hex[:10]}"
    config = SchedulerConfig(
        bootstrap_servers=kafka.bootstrap_servers, topic=name, group_id=f"{name}-scheduler"
    )
    config.ensure_topics(partitions=PARTITIONS)
    return config


@pytest.fixture
def target(kafka: EmbeddedBroker) -> str:
    name = f"target-{uuid.uuid4().hex[:10]}"
    ensure_topics(kafka.bootstrap_servers, {name: PARTITIONS})
    return name


@pytest.fixture
def scheduler(schedules: SchedulerConfig) -> Iterator[Scheduler]:
    s = Scheduler(schedules)
    s.start()
    yield s
    s.stop()


def in_seconds(seconds: float) -> float:
    """Epoch seconds ``seconds`` from now."""
    return time.time() + seconds


def fired(config: SchedulerConfig, topic: str) -> list[KafkaMessage]:
    return read_topic(config.bootstrap_servers, topic, PARTITIONS)


def fired_ids(config: SchedulerConfig, topic: str) -> Counter[str]:
    """How many times each schedule id reached ``topic``."""
    return Counter(dict(r.headers())[wire.FIRED_KEY].decode() for r in fired(config, topic))
