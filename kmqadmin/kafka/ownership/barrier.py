"""Barrier records: how a new partition owner knows it has read everything.

A new owner must not act (redeliver, fire) before it has read every record
written before it took the partition over, or it acts on stale state (kmq
issue #158 is exactly that). So the owner writes a no-op record of its own,
in a transaction, right after ``init_transactions`` has fenced the previous
owner, and is caught up once it reads that record back.

That read-back is the proof on Apache Kafka too: ``init_transactions``
resolved the previous owner's open transaction (aborted, or a commit it had
begun completed) before it returned, so every record written before the
barrier sits at a lower offset and is decided, and a ``read_committed``
reader is handed the barrier only after everything before it. It relies
only on the order of one partition's log, not on what an end offset means
(high watermark or last stable offset, which depends on the asker's
isolation level and on transactions still being resolved). It costs one
record per assignment.
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
