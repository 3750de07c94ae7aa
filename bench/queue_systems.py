"""The four consumers bench/queues.py compares, behind one small interface.

Each polls a batch and acknowledges records; ``ack`` is told which records
the worker still holds (head-of-line runs) and returns the records whose
acknowledgement the call completed. For our clients and the share consumer
that is the records given; a plain consumer group acknowledges by offset, so
nothing behind a held record in its partition is acknowledged until that
record is done.
"""

import math
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import (
    Consumer,
    IllegalStateException,
    KafkaError,
    KafkaException,
    ShareConsumer,
    TopicPartition,
)

from kmqadmin.kafka.client.config import client_config, consumer_config
from kmqadmin.kafka.share_consumer.errors import UnsettledRecords
from kmqadmin.kmq import QueueClient, QueueConfig

# What bench/queues.py calls each variant; "each" and "batch" name how a
# batch is acknowledged: a call per message, or one ack_all.
PLAIN = "plain_group"
KMQ_EACH, KMQ_BATCH = "kmq_each", "kmq_batch"
SHARE_EACH, SHARE_BATCH = "share_each", "share_batch"
SHARE_CONSUMER = "share_consumer"
# Our share backend on librdkafka's consumer (share_acquire_mode="batch_optimized").
SHARE_FAST = "share_batch_optimized"
SYSTEMS = (PLAIN, KMQ_EACH, KMQ_BATCH, SHARE_EACH, SHARE_BATCH, SHARE_FAST, SHARE_CONSUMER)


@dataclass(frozen=True)
class Target:
    """Where a worker consumes: a topic and group, or a queue's whole config."""

    bootstrap_servers: str
    topic: str
    group_id: str
    queue: QueueConfig | None = None


class MustSettle(Exception):
    """librdkafka's share consumer (bare, or ours in batch_optimized mode)
    hands a member its next batch only once every record of the previous one
    is settled: a held record stops the member's polls."""


class System(Protocol):
    def poll(self, max_messages: int, timeout: float) -> list[Any]: ...

    def ack(self, done: list[Any], held: list[Any]) -> list[Any]: ...

    def created_ms(self, record: Any) -> int: ...

    def finish(self) -> None: ...

    def close(self) -> None: ...


class PlainGroup:
    """A consumer group committing per batch: the baseline any queue is held to."""

    def __init__(self, target: Target) -> None:
        self._consumer = Consumer(consumer_config(target.bootstrap_servers, target.group_id))
        self._consumer.subscribe([target.topic])
        self._waiting: list[Any] = []  # done, but behind a held record of their partition

    def poll(self, max_messages: int, timeout: float) -> list[Any]:
        return [r for r in self._consumer.consume(max_messages, timeout) if r.error() is None]

    def ack(self, done: list[Any], held: list[Any]) -> list[Any]:
        if not held and not self._waiting:
            self._consumer.commit(asynchronous=True)
            return done
        floor: dict[tuple[str, int], int] = {}
        for r in held:
            key = (r.topic(), r.partition())
            floor[key] = min(floor.get(key, math.inf), r.offset())
        covered, waiting, self._waiting = [], self._waiting + done, []
        for r in waiting:
            below = r.offset() < floor.get((r.topic(), r.partition()), math.inf)
            (covered if below else self._waiting).append(r)
        ends: dict[tuple[str, int], int] = {}
        for r in covered:
            key = (r.topic(), r.partition())
            ends[key] = max(ends.get(key, 0), r.offset() + 1)
        if ends:
            offsets = [TopicPartition(t, p, o) for (t, p), o in ends.items()]
            self._consumer.commit(offsets=offsets, asynchronous=True)
        return covered

    def created_ms(self, record: Any) -> int:
        return record.timestamp()[1]

    def finish(self) -> None:
        try:
            self._consumer.commit(asynchronous=False)
        except KafkaException as exc:  # a member that was given no partition
            if exc.args[0].code() != KafkaError._NO_OFFSET:
                raise

    def close(self) -> None:
        self._consumer.close()


class QueueBackend:
    """Our QueueClient, on either backend; acks a call per message or one ack_all."""

    def __init__(self, target: Target, batch_acks: bool) -> None:
        assert target.queue is not None
        self._client = QueueClient(target.queue)
        self._batch_acks = batch_acks

    def poll(self, max_messages: int, timeout: float) -> list[Any]:
        try:
            return self._client.poll(max_messages, timeout)
        except UnsettledRecords:  # share_acquire_mode="batch_optimized"
            raise MustSettle from None

    def ack(self, done: list[Any], held: list[Any]) -> list[Any]:
        if self._batch_acks:
            self._client.ack_all(done)
        else:
            ack = self._client.ack
            for message in done:
                ack(message)
        return done

    def created_ms(self, record: Any) -> int:
        return record.timestamp

    def finish(self) -> None:
        self._client.flush()

    def close(self) -> None:
        self._client.close()


class BareShareConsumer:
    """confluent-kafka's ShareConsumer in explicit mode: acknowledge each, commit per poll."""

    def __init__(self, target: Target) -> None:
        config = client_config(target.bootstrap_servers)
        config.update({"group.id": target.group_id, "share.acknowledgement.mode": "explicit"})
        self._consumer = ShareConsumer(config)
        self._consumer.subscribe([target.topic])

    def poll(self, max_messages: int, timeout: float) -> list[Any]:
        # librdkafka's share consumer returns what one fetch brought: no count to ask for.
        try:
            return [r for r in self._consumer.poll(timeout) if r.error() is None]
        except IllegalStateException:
            raise MustSettle from None

    def ack(self, done: list[Any], held: list[Any]) -> list[Any]:
        acknowledge = self._consumer.acknowledge
        for record in done:
            acknowledge(record)
        if done:
            self._consumer.commit_async()
        return done

    def created_ms(self, record: Any) -> int:
        return record.timestamp()[1]

    def finish(self) -> None:
        self._consumer.commit_sync()

    def close(self) -> None:
        self._consumer.close()


def open_system(name: str, target: Target) -> System:
    if name == PLAIN:
        return PlainGroup(target)
    if name == SHARE_CONSUMER:
        return BareShareConsumer(target)
    return QueueBackend(target, batch_acks=name in (KMQ_BATCH, SHARE_BATCH, SHARE_FAST))
