"""Reading and writing topics in tests, below the queue API: whole topics
read back, bulk fills, and counting what a module's consumers hand out."""

from collections.abc import Iterable
from types import ModuleType

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import Message as KafkaMessage

from bench.common import read_topic
from kmqadmin.kmq import QueueConfig


def read_all(config: QueueConfig, topic: str, partitions: int = 3) -> list[KafkaMessage]:
    return read_topic(config.bootstrap_servers, topic, partitions)


def fill(config: QueueConfig, topic: str, records: Iterable[tuple[bytes, int]]) -> None:
    """(value, timestamp ms) records onto partition 0 of ``topic``, fast: one
    producer, big lingering batches, one flush."""
    producer = Producer(
        {
            "bootstrap.servers": config.bootstrap_servers,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    for value, at in records:
        producer.produce(topic, value, partition=0, timestamp=at)
    assert producer.flush(60) == 0


def count_reads(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[tuple[str, int, int]]:
    """Every record that the consumers ``module`` builds hand out, as (topic,
    partition, offset). They stay real consumers of the real broker; only
    their consume calls are noted."""
    handed: list[tuple[str, int, int]] = []

    class CountingConsumer(Consumer):
        def consume(self, *args: object, **kwargs: object) -> list[KafkaMessage]:
            records = super().consume(*args, **kwargs)
            handed.extend(
                (r.topic(), r.partition(), r.offset()) for r in records if r.error() is None
            )
            return records

    monkeypatch.setattr(module, "Consumer", CountingConsumer)
    return handed
