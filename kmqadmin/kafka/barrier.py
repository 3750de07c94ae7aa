"""Barrier records: how a new partition owner knows it has read everything.

A new owner must not act (redeliver, fire) before it has read every record
written before it took the partition over, or it acts on stale state (kmq
issue #158 is exactly that). Kafka's high watermark would say where the end
is, but some Kafka-protocol brokers (Tansu) report a partition's end as its
last batch's base offset + 1. So the owner writes a no-op record of its own,
after ``init_transactions`` has fenced the previous owner, and is caught up
once it reads that record back.
"""

from confluent_kafka import KafkaException, Producer


def write_barrier(
    producer: Producer, topic: str, partition: int, key: bytes, value: bytes | None
) -> int:
    """Writes the no-op record in its own transaction and returns its offset."""
    offsets: list[int] = []
    producer.begin_transaction()
    producer.produce(
        topic,
        key=key,
        value=value,
        partition=partition,
        on_delivery=lambda err, msg: offsets.append(-1 if err else msg.offset()),
    )
    producer.commit_transaction(30)
    if not offsets or offsets[0] < 0:
        raise KafkaException(f"barrier record on {topic}/{partition} was not written")
    return offsets[0]
