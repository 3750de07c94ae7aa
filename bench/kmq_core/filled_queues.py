"""A queue made for one benchmark run, and filled: every measure starts from
a topic of its own, so no run reads another's records or offsets."""

import time
import uuid

from confluent_kafka import Producer

from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import QueueConfig

PARTITIONS = 3


def new_queue(bootstrap: str, **kwargs: object) -> QueueConfig:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    config = QueueConfig(bootstrap_servers=bootstrap, topic=name, group_id=f"{name}-g", **kwargs)
    config.ensure_topics(partitions=PARTITIONS)
    return config


def fill(bootstrap: str, topic: str, n: int, size: int) -> None:
    producer = Producer(producer_config(bootstrap, extra={"linger.ms": 20}))
    payload = b"x" * size
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value=payload, key=str(i).encode())
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush()


def filled_queue(
    bootstrap: str, n: int, size: int, settle_s: float, **kwargs: object
) -> QueueConfig:
    """A new queue holding ``n`` records, and a pause after writing them: for
    a few seconds after a burst of writes the broker is busy with work of
    its own, and on 2 cores a consumer started at once read at half the rate
    it reached later. Every rate here starts after the same pause."""
    config = new_queue(bootstrap, **kwargs)
    fill(bootstrap, config.topic, n, size)
    time.sleep(settle_s)
    return config
