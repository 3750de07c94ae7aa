"""Schedule times and what the scheduler fired, in tests."""

import time
from collections import Counter

from confluent_kafka import Message as KafkaMessage

from bench.common import read_topic
from kmqadmin.scheduler import SchedulerConfig, wire

# Every schedules and target topic of the suite has this many partitions.
PARTITIONS = 3


def in_seconds(seconds: float) -> float:
    """Epoch seconds ``seconds`` from now."""
    return time.time() + seconds


def fired(config: SchedulerConfig, topic: str) -> list[KafkaMessage]:
    return read_topic(config.bootstrap_servers, topic, PARTITIONS)


def fired_ids(config: SchedulerConfig, topic: str) -> Counter[str]:
    """How many times each schedule id reached ``topic``."""
    return Counter(dict(r.headers())[wire.FIRED_KEY].decode() for r in fired(config, topic))
