"""Reading a whole (small) topic as it is now, without a consumer group."""

import uuid
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from .config import consumer_config


def read_topic(
    bootstrap_servers: str,
    topic: str,
    partitions: int,
    extra: Mapping[str, Any] | None = None,
) -> list[KafkaMessage]:
    """Every committed record of ``topic`` from the start to its end as of now.

    Reads until each partition's position reaches the end reported at the
    start: a read_committed consumer is told the last stable offset, and its
    position moves past transaction markers and aborted records. For tests,
    benchmarks and small topics; pages of big topics must seek, never read
    it all.
    """
    consumer = Consumer(consumer_config(bootstrap_servers, f"snapshot-{uuid.uuid4().hex}", extra))
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    ends = [consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in tps]
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records: list[KafkaMessage] = []
    try:
        while True:
            records.extend(r for r in consumer.consume(2000, 0.5) if r.error() is None)
            positions = [max(tp.offset, 0) for tp in consumer.position(tps)]
            if all(p >= e for p, e in zip(positions, ends, strict=True)):
                return records
    finally:
        consumer.close()
