"""Sending and receiving through the queue API in tests."""

from collections import Counter
from typing import Any

from confluent_kafka import Message as KafkaMessage
from confluent_kafka import Producer

from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import Message, QueueClient, QueueConfig, QueueProducer
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.process import wait_for


def new_queue(
    bootstrap_servers: str, topic: str, partitions: int = 3, **settings: Any
) -> QueueConfig:
    """A queue on ``partitions``, its topics created; a 1 s message timeout
    and 3 redeliveries unless ``settings`` say otherwise."""
    config = QueueConfig(
        bootstrap_servers=bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        **{"message_timeout_ms": 1000, "max_redeliveries": 3, **settings},
    )
    config.ensure_topics(partitions=partitions)
    return config


def copies(queue: QueueConfig, partitions: int = 3) -> Counter[tuple[bytes | None, bytes | None]]:
    """Each (kmq-id, attempt) the tracker copied to the queue topic (on
    ``partitions``), and how many times: more than once is a duplicate."""
    return Counter(
        (h.find(r.headers(), h.MESSAGE_ID), h.find(r.headers(), h.REDELIVERY_COUNT))
        for r in read_all(queue, queue.topic, partitions)
        if h.find(r.headers(), h.REDELIVERY_COUNT)
    )


# Another producer's batches: the Java client's partitioner, linger and compression.
JAVA_STYLE = {"partitioner": "murmur2", "linger.ms": 20, "compression.type": "lz4"}


def send_as(queue: QueueConfig, n: int, extra: dict | None) -> None:
    """m0..m{n-1} keyed k0..; ``extra``: another producer's settings."""
    if extra is None:
        send(queue, n)
        return
    producer = Producer(producer_config(queue.bootstrap_servers, extra=extra))
    for i in range(n):
        producer.produce(queue.topic, value=f"m{i}".encode(), key=f"k{i}".encode())
    assert producer.flush(30) == 0


def send(queue: QueueConfig, n: int, **kwargs: object) -> None:
    producer = QueueProducer(queue)
    for i in range(n):
        producer.send(value=f"m{i}".encode(), key=f"k{i}".encode(), **kwargs)
    producer.flush()


def poll_until(client: QueueClient, count: int, timeout: float = 30) -> list[Message]:
    got: list[Message] = []

    def enough() -> bool:
        got.extend(client.poll(500, 0.2))
        return len(got) >= count

    wait_for(enough, timeout, f"{count} messages")
    return got


def reject_taken(
    queue: QueueConfig, count: int, reason: str = "rejected by a test"
) -> tuple[list[Message], list[KafkaMessage]]:
    """The next ``count`` messages taken and rejected; returned once their
    letters are in the DLQ, with every letter the DLQ holds."""
    with QueueClient(queue) as worker:
        taken = poll_until(worker, count)
        worker.reject_all(taken, reason=reason)

    def letters() -> list[KafkaMessage] | None:
        found = dlq(queue)
        return found if len(found) >= count else None

    return taken, wait_for(letters, 30, f"{count} letters")


def dlq(queue: QueueConfig) -> list:
    return read_all(queue, queue.dlq_topic)
