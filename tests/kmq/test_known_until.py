"""TrackedPartition.known_until against a real broker: how far in time a
markers partition is known to be read, while a transaction holds its last
stable offset and a worker's ack waits behind it."""

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import markers
from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition, apply_batch
from tests.process import wait_for

QUIET_MS = 5_000  # how long before the transaction the last marker was written


def read_to_end(consumer: Consumer, state: TrackedPartition, end: int) -> None:
    """Consumes until the consumer says it reached ``end`` (PARTITION_EOF)."""

    def reached() -> bool:
        apply_batch({0: state}, consumer.consume(100, 0.2), lambda *_: None)
        return state.end_read == end

    wait_for(reached, 30, f"the end of the readable markers at {end}", every=0)


def test_a_partition_held_by_the_trackers_own_transaction_is_known_up_to_its_start(
    kafka: EmbeddedBroker,
) -> None:
    """A start marker written 5 s ago, then (the tracker's) transaction's
    end marker, then a worker's ack behind it. The consumer stops at the
    transaction, short of the high watermark: known up to when that
    transaction began when it is the tracker's own (``held_since``), else
    only up to the last marker read, 5 s back; up to now once it commits."""
    topic = f"known-{uuid.uuid4().hex[:8]}"
    ensure_topics(kafka.bootstrap_servers, {topic: 1})
    plain = Producer(producer_config(kafka.bootstrap_servers))
    quiet_since = now_ms() - QUIET_MS
    plain.produce(topic, markers.start(30_000), markers.encode_key(0, 1), 0, timestamp=quiet_since)
    plain.flush(10)
    tracker = Producer(producer_config(kafka.bootstrap_servers, transactional_id=topic))
    tracker.init_transactions(10)
    began = now_ms()
    tracker.begin_transaction()
    tracker.produce(topic, markers.END, markers.encode_key(0, 0), 0)
    tracker.flush(10)  # written, not decided
    plain.produce(topic, markers.END, markers.encode_key(0, 1), 0)  # the worker's ack
    plain.flush(10)

    consumer = Consumer(
        consumer_config(kafka.bootstrap_servers, topic, {"enable.partition.eof": True})
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    state = TrackedPartition(partition=0)
    try:
        read_to_end(consumer, state, 1)  # the start marker; held at the transaction
        assert state.open.next_deadline() == quiet_since + 30_000  # the ack not read
        now = now_ms()
        assert state.known_until(consumer, topic, now, held_since=began) == began
        assert state.known_until(consumer, topic, now) == quiet_since

        tracker.commit_transaction(10)
        read_to_end(consumer, state, 4)  # its end marker, the ack, its commit marker
        assert state.open.next_deadline() is None
        later = now_ms()
        assert state.known_until(consumer, topic, later, held_since=began) == later
    finally:
        consumer.close()
