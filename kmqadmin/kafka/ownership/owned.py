"""What a partition owner owns: the topic it reads, and each partition it is
assigned with the transactional producer that makes it the only owner."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from kmqadmin.kafka.client.config import producer_config


@dataclass(frozen=True, slots=True)
class Owned:
    """What an owner reads and how it joins the group."""

    bootstrap_servers: str
    topic: str
    group_id: str
    kafka_config: Mapping[str, Any]


@dataclass(eq=False, kw_only=True)
class OwnedPartition:
    """One assigned partition: its fenced producer and how far it is read."""

    partition: int
    producer: Producer
    catch_up_to: int  # one past the barrier written at assignment
    next_offset: int = 0  # next offset to read

    @property
    def caught_up(self) -> bool:
        """Whether every record present at assignment has been read: until
        then what would cancel an action (an end marker, a schedule's newer
        version) may still be ahead, so nothing acts (kmq issue #158)."""
        return self.next_offset >= self.catch_up_to


def fencing_producer(owned: Owned, role: str, partition: int) -> Producer:
    """The partition's transactional producer, ready: its id,
    f"kmq-{role}-{topic}-{partition}" (a wire fact), is the same for every
    owner of the partition, so its ``init_transactions`` has fenced the
    previous owner and aborted that one's open transaction. Call it first: an
    offset the previous owner sent in that transaction keeps ``committed()``
    waiting (KIP-447 stable offsets) until it ends."""
    producer = Producer(
        producer_config(
            owned.bootstrap_servers,
            transactional_id=f"kmq-{role}-{owned.topic}-{partition}",
            extra=owned.kafka_config,
        )
    )
    producer.init_transactions(30)
    return producer
