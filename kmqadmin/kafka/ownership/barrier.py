"""Barrier records: how a new partition owner knows it has read everything.

A new owner must not act (redeliver, fire) before it has read every record
written before it took the partition over, or it acts on stale state (kmq
issue #158 is exactly that). So the owner writes a no-op record of its own
into each newly assigned partition, in one transaction, and a partition is
caught up once its record is read back.

That read-back is the proof on Apache Kafka: a ``read_committed`` reader is
handed the barrier only after every record before it is decided, so a
transaction the previous owner left open (killed mid-turn) holds the
barrier back until it is aborted, by the same slot's next
``init_transactions`` or by its timeout (owner_producer.py). It relies
only on the order of one partition's log, not on what an end offset means
(high watermark or last stable offset, which depends on the asker's
isolation level and on transactions still being resolved). It costs one
record per assignment.

A transaction may also be open with nothing in the partition yet: one an
owner began ahead and sent its offsets in (owner_producer.py), which a
paused owner may still fire in once resumed. Its offsets are pending, and a
read_committed consumer's ``committed()`` waits for them (KIP-447 stable
offsets), so the barriers are written once that answers: what such a
transaction writes lands before them.
"""

from collections.abc import Mapping

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

# committed() waits while a transaction that commits the partition's offset
# is open: a dead owner's, until the broker aborts it (by the time the group
# noticed the death, transaction_timeout.py).
STABLE_OFFSETS_TIMEOUT_S = 30


def stable_offsets(consumer: Consumer, topic: str, partitions: list[int]) -> list[TopicPartition]:
    """The committed offsets of ``partitions``, once no open transaction
    commits any of them; ``consumer`` reads read_committed."""
    asked = [TopicPartition(topic, p) for p in sorted(partitions)]
    return consumer.committed(asked, timeout=STABLE_OFFSETS_TIMEOUT_S)


def write_barriers(
    producer: Producer, topic: str, keys: Mapping[int, bytes], value: bytes | None
) -> dict[int, int]:
    """Writes one no-op record per partition of ``keys`` (partition -> key)
    in one transaction; returns each one's offset."""
    offsets: dict[int, int] = {}

    def delivered(err: object, msg: object) -> None:
        if err is None:
            offsets[msg.partition()] = msg.offset()  # type: ignore[attr-defined]

    producer.begin_transaction()
    for partition, key in keys.items():
        producer.produce(topic, key=key, value=value, partition=partition, on_delivery=delivered)
    producer.commit_transaction(30)
    if missing := sorted(keys.keys() - offsets.keys()):
        raise KafkaException(f"barrier records on {topic} partitions {missing} were not written")
    return offsets
